"""opencode 1.18.33, driven headless and offline.

`opencode run` with a provider on 127.0.0.1 in the project's
`opencode.json` (`@ai-sdk/openai-compatible`, bundled with opencode: OpenAI
Chat Completions). The config allows bash, edits and reads without asking,
so nothing but the guard's plugin stands between a call and its effect.
opencode sends a title request (no tools) before the turn; the scripted
model answers it like any other and opencode ignores the reply.
"""

from __future__ import annotations

import json
from pathlib import Path

from scripted_model import ToolCall

NAME = "opencode"
BINARY = Path(__file__).parent / "node_modules/opencode-linux-x64/bin/opencode"


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    """Writes the scripted provider into the project's opencode.json."""
    config = project / "opencode.json"
    document = json.loads(config.read_text()) if config.exists() else {}
    document.update(
        {
            "$schema": "https://opencode.ai/config.json",
            "model": "scripted/m",
            "autoupdate": False,
            "share": "disabled",
            "provider": {
                "scripted": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Scripted",
                    "options": {"baseURL": f"{model_url}/v1", "apiKey": "scripted"},
                    "models": {"m": {"name": "m", "tool_call": True}},
                }
            },
            "permission": {"bash": "allow", "edit": "allow", "read": "allow", "external_directory": "allow"},
        }
    )
    config.write_text(json.dumps(document, indent=2))
    return {"HOME": str(home), "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"}


def command(prompt: str) -> list[str]:
    return [str(BINARY), "run", prompt]


def shell(command_line: str) -> ToolCall:
    return ToolCall("bash", {"command": command_line, "description": "run it"})


def write(path: str, content: str) -> ToolCall:
    return ToolCall("write", {"filePath": path, "content": content})


def read(path: str) -> ToolCall:
    return ToolCall("read", {"filePath": path})
