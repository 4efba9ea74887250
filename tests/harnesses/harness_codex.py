"""Codex CLI 0.171.0, driven headless and offline: `codex exec` with a
custom `model_providers` entry on 127.0.0.1 (OpenAI Responses). Its shell
tool is `exec_command {cmd}`; a file is written with `apply_patch` inside
that command, which is how a patch reaches the hook (as `Bash`). Codex
ignores an untrusted project's `.codex` folder and skips hooks nobody has
trusted: a person trusts the project (written into config.toml here) and
the hook in `/hooks`, which `trust` does as `/hooks` does: it asks Codex's
own app server for the hook's current hash (`hooks/list`) and records it
as trusted in config.toml.
"""

from __future__ import annotations

import json
import subprocess
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
        prompt,
    ]


def trust(home: Path, project: Path, env: dict[str, str]) -> None:
    """A person's review in `/hooks`: every hook Codex lists for the
    project is trusted as it is now."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "suite", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(project)]}},
    ]
    server = subprocess.Popen(
        [str(BINARY), "app-server"], cwd=project, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        server.stdin.flush()
        listed = None
        for line in server.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                listed = message["result"]["data"]
                break
    finally:
        server.kill()
        server.wait()
    hooks = [hook for entry in listed or [] for hook in entry["hooks"]]
    assert hooks, f"Codex lists no hook for {project}"
    with (home / ".codex" / "config.toml").open("a") as config:
        for hook in hooks:
            config.write(f'[hooks.state."{hook["key"]}"]\ntrusted_hash = "{hook["currentHash"]}"\n')


def shell(command_line: str) -> ToolCall:
    return ToolCall("exec_command", {"cmd": command_line})


def write(path: str, content: str) -> ToolCall:
    added = "".join(f"+{line}\n" for line in content.splitlines())
    envelope = f"*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch\n"
    return shell(f"apply_patch <<'EOF'\n{envelope}EOF\n")


def read(path: str) -> ToolCall:
    return shell(f"cat {path}")
