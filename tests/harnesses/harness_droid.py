"""Factory Droid 0.225.2, driven headless and offline.

`droid exec --auto high` with a BYOK custom model on 127.0.0.1
(`customModels` in `~/.factory/settings.json`, provider
`generic-chat-completion-api`: OpenAI Chat Completions); no Factory sign-in
is needed for a custom model. `--auto high` lets Droid run the calls
itself; the hook is what may still refuse them. Droid's `Execute` requires
`riskLevel` and `riskLevelReason`, or it rejects the call before any hook.
"""

from __future__ import annotations

import json
from pathlib import Path

from scripted_model import ToolCall

NAME = "droid"
# The confirm-tier command of the human scenario: Droid's own rules refuse
# `git push` after the hook defers, so a human's Approve could not be seen
# to run it; `terraform apply` asks the same human through the guard.
CONFIRM = "touch approved.txt; terraform apply"
BINARY = Path(__file__).parent / "node_modules/@factory/cli-linux-x64/bin/droid"
MODEL = "custom:Scripted-0"


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    """Writes the custom model into the user's Droid settings."""
    settings = home / ".factory" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    document = json.loads(settings.read_text()) if settings.exists() else {}
    document["customModels"] = [
        {
            "model": "scripted",
            "displayName": "Scripted",
            "baseUrl": f"{model_url}/v1",
            "apiKey": "scripted",
            "provider": "generic-chat-completion-api",
            "maxOutputTokens": 4096,
        }
    ]
    settings.write_text(json.dumps(document, indent=2))
    return {"HOME": str(home)}


def command(prompt: str) -> list[str]:
    return [str(BINARY), "exec", "--auto", "high", "-m", MODEL, prompt]


def shell(command_line: str) -> ToolCall:
    return ToolCall(
        "Execute",
        {"command": command_line, "summary": "run it", "riskLevelReason": "the task asks for it", "riskLevel": "low"},
    )


def write(path: str, content: str) -> ToolCall:
    return ToolCall("Create", {"file_path": path, "content": content})


def read(path: str) -> ToolCall:
    return ToolCall("Read", {"file_path": path})
