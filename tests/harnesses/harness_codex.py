"""Codex CLI 0.171.0, driven headless and offline: `codex exec` with a
custom `model_providers` entry on 127.0.0.1 (OpenAI Responses). Its shell
tool is `exec_command {cmd}`; a file is written with `apply_patch` inside
that command, which is how a patch reaches the hook (as `Bash`). Codex
ignores an untrusted project's `.codex` folder and skips hooks nobody has
trusted: a person trusts the project (written into config.toml here) and
the hook in `/hooks`; the suite passes `--dangerously-bypass-hook-trust`
for that one review.
"""

from __future__ import annotations

from pathlib import Path

from scripted_model import ToolCall

NAME = "codex"
BINARY = Path(__file__).parent / "node_modules/.bin/codex"


def prepare(home: Path, project: Path, model_url: str) -> dict[str, str]:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'model = "gpt-5.4"\nmodel_provider = "scripted"\n'
        "[model_providers.scripted]\n"
        f'name = "scripted"\nbase_url = "{model_url}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n'
        # What a person's "trust this project" writes: Codex ignores an
        # untrusted project's .codex folder, hooks included.
        f'[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    return {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "SCRIPTED_KEY": "scripted"}


def command(prompt: str) -> list[str]:
    return [
        str(BINARY), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-bypass-hook-trust", prompt,
    ]


def shell(command_line: str) -> ToolCall:
    return ToolCall("exec_command", {"cmd": command_line})


def write(path: str, content: str) -> ToolCall:
    added = "".join(f"+{line}\n" for line in content.splitlines())
    envelope = f"*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch\n"
    return shell(f"apply_patch <<'EOF'\n{envelope}EOF\n")


def read(path: str) -> ToolCall:
    return shell(f"cat {path}")
