"""Claude Code 2.1.332, driven headless and offline: `claude -p` with
`ANTHROPIC_BASE_URL` on 127.0.0.1 (Anthropic Messages). As root Claude
Code refuses `bypassPermissions` unless `IS_SANDBOX=1`; the mode lets it
run the calls itself, and the hook is what may still refuse them.
"""

from __future__ import annotations

from pathlib import Path

from scripted_model import ToolCall

NAME = "claude-code"
BINARY = Path(__file__).parent / "node_modules/.bin/claude"


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    return {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "scripted",
        "IS_SANDBOX": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def command(prompt: str) -> list[str]:
    return [str(BINARY), "-p", prompt, "--permission-mode", "bypassPermissions"]


def shell(command_line: str) -> ToolCall:
    return ToolCall("Bash", {"command": command_line, "description": "run it"})


def write(path: str, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": path, "content": content})


def read(path: str) -> ToolCall:
    return ToolCall("Read", {"file_path": path})
