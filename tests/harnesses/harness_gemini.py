"""Gemini CLI 0.61.0, driven headless and offline: `gemini -p` with
`GOOGLE_GEMINI_BASE_URL` on 127.0.0.1 (Gemini API) and `--approval-mode
yolo`, so it runs the calls itself and the hook is what may still refuse
them. Folder trust is switched off in the user's settings here; a person
trusts the folder once instead.
"""

from __future__ import annotations

import json
from pathlib import Path

from scripted_model import ToolCall

NAME = "gemini"
BINARY = Path(__file__).parent / "node_modules/.bin/gemini"


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}}))
    return {"HOME": str(home), "GOOGLE_GEMINI_BASE_URL": model_url, "GEMINI_API_KEY": "scripted", "GEMINI_CLI_NO_RELAUNCH": "1"}


def command(prompt: str) -> list[str]:
    return [str(BINARY), "-p", prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-flash"]


def shell(command_line: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command_line})


def write(path: str, content: str) -> ToolCall:
    return ToolCall("write_file", {"file_path": path, "content": content})


def read(path: str) -> ToolCall:
    return ToolCall("read_file", {"file_path": path})
