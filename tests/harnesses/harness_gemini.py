"""Gemini CLI 0.61.0, driven headless and offline: `gemini -p` with
`GOOGLE_GEMINI_BASE_URL` on 127.0.0.1 (Gemini API) and `--approval-mode
yolo`, so it runs the calls itself and the hook is what may still refuse
them. Its read_file stays inside the workspace, so a key outside it is
read with the shell. Gemini runs no hook in a folder it does not trust:
`prepare` trusts the project as a person does once
(`~/.gemini/trustedFolders.json`).
"""

from __future__ import annotations

import json
from pathlib import Path

from scripted_model import ToolCall

NAME = "gemini"
# Gemini refuses to write under .git itself; a husky hook runs as well.
PLANTED = ".husky/pre-commit"
BINARY = Path(__file__).parent / "node_modules/.bin/gemini"


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    # What a person's "trust this folder" writes: Gemini runs no hook at
    # all in a folder it does not trust.
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    return {"HOME": str(home), "GOOGLE_GEMINI_BASE_URL": model_url, "GEMINI_API_KEY": "scripted", "GEMINI_CLI_NO_RELAUNCH": "1"}


def command(prompt: str) -> list[str]:
    return [str(BINARY), "-p", prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-flash"]


def shell(command_line: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command_line})


def write(path: str, content: str) -> ToolCall:
    return ToolCall("write_file", {"file_path": path, "content": content})


def read(path: str) -> ToolCall:
    # Gemini's read_file refuses paths outside the workspace by itself; its
    # shell does not.
    return shell(f"cat {path}")
