"""GitHub Copilot CLI 1.0.102, driven headless and offline.

`copilot -p` with a BYOK provider on 127.0.0.1 (`COPILOT_OFFLINE=true`
skips GitHub sign-in, telemetry and updates; `COPILOT_PROVIDER_BASE_URL`
points it at the scripted model, which it speaks OpenAI Chat Completions
to). A Claude model id makes Copilot offer `bash`, `create`, `edit` and
`view`. `--allow-all-tools` is what headless mode needs to run a tool at all;
the hook is what may still refuse it.

Project hooks (`.github/hooks/*.json`) run only in a trusted folder, so
`prepare` trusts the project as a person does once, answering the
folder-trust prompt with "remember" (`trustedFolders` in config.json).
"""

from __future__ import annotations

import json
from pathlib import Path

from scripted_model import ToolCall

NAME = "copilot"
BINARY = Path(__file__).parent / "node_modules/@github/copilot-linux-x64/copilot"
MODEL = "claude-sonnet-4.6"


def environment(home: Path, model_url: str) -> dict[str, str]:
    """The variables that point Copilot at the scripted model, offline."""
    return {
        "HOME": str(home),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": f"{model_url}/v1",
        "COPILOT_PROVIDER_API_KEY": "scripted",
        "COPILOT_MODEL": MODEL,
        "COPILOT_AUTO_UPDATE": "false",
    }


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    """Copilot takes its provider from the environment; the folder's trust
    is what a person's "remember" writes."""
    config = home / ".copilot" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"trustedFolders": [str(project)]}))
    return environment(home, model_url)


def command(prompt: str) -> list[str]:
    return [str(BINARY), "-p", prompt, "--allow-all-tools", "--allow-all-paths", "--no-auto-update"]


def shell(command_line: str) -> ToolCall:
    return ToolCall("bash", {"command": command_line, "description": "run it"})


def write(path: str, content: str) -> ToolCall:
    return ToolCall("create", {"path": path, "file_text": content})


def read(path: str) -> ToolCall:
    return ToolCall("view", {"path": path})
