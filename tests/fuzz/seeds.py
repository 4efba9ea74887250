#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from the project's corpora, so
nothing generated is committed: `seeds.py DIR` fills DIR/<target>/ for
every target (one file per seed).

Sources: tests/corpus/commands.toml (every dangerous and ordinary command),
tests/corpus/writes.toml (every planted and ordinary write, edits with the
file as it was), tests/corpus/claude-code-hook.json (real PreToolUse
payloads) and the adapter files under examples/."""

import hashlib
import json
import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
CORPUS = ROOT / "tests" / "corpus"


def commands():
    table = tomllib.loads((CORPUS / "commands.toml").read_text())
    for group in table["dangerous"] + table["ordinary"]:
        yield from group["commands"]


def write_rows():
    return tomllib.loads((CORPUS / "writes.toml").read_text())["write"]


def writes():
    """(path, content, file as it is now or None) for every write row."""
    for row in write_rows():
        if "content" in row:
            yield row["path"], row["content"], None
        else:
            yield row["path"], row["before"].replace(row["old"], row["new"], 1), row["before"]


def hook_payloads():
    for case in json.loads((CORPUS / "claude-code-hook.json").read_text())["cases"]:
        yield case["payload"]
    base = {"session_id": "s", "cwd": "/home/dev/repo", "hook_event_name": "PreToolUse"}
    for command in commands():
        yield {**base, "tool_name": "Bash", "tool_input": {"command": command}}
    for row in write_rows():
        if "content" in row:
            yield {**base, "tool_name": "Write", "tool_input": {"file_path": row["path"], "content": row["content"]}}
        else:
            yield {**base, "tool_name": "Edit", "tool_input": {"file_path": row["path"], "old_string": row["old"], "new_string": row["new"]}}


def frames():
    def frame(message):
        return json.dumps({"jsonrpc": "2.0", **message}).encode()

    yield frame({"id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}})
    yield frame({"method": "notifications/initialized"})
    yield frame({"id": 1, "method": "tools/list"})
    yield b"\xef\xbb\xbf" + frame({"id": "a", "method": "ping"})
    yield frame({"id": 2, "method": "tools/call", "params": {"name": "mcp_aql_read", "arguments": {"operation": "introspect", "params": {"query": "operations"}}}})
    yield frame({"id": 3, "method": "tools/call", "params": {"name": "mcp_aql_execute", "arguments": {"operation": "verify_challenge", "params": {"challenge_id": "x", "code": "ABCDE-FGHJK"}}}})
    for n, command in enumerate(commands()):
        yield frame({"id": n + 10, "method": "tools/call", "params": {"name": "mcp_aql_create", "arguments": {"operation": "record_execution_step", "params": {"element_name": "fuzz", "nextActionHint": command}}}})


def seeds():
    yield "adapter_file", (path.read_bytes() for path in sorted(ROOT.glob("examples/**/*-adapter.md")))
    yield "hint", (command.encode() for command in commands())
    yield "hook_call", (json.dumps(payload).encode() for payload in hook_payloads())
    yield "planted_write", (
        f"{path}\n{content}".encode() + (b"" if before is None else b"\0" + before.encode())
        for path, content, before in writes()
    )
    yield "mcp_frame", frames()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: seeds.py DIR")
    root = pathlib.Path(sys.argv[1])
    for target, items in seeds():
        folder = root / target
        folder.mkdir(parents=True, exist_ok=True)
        count = 0
        for item in items:
            (folder / hashlib.sha1(item).hexdigest()).write_bytes(item)
            count += 1
        print(f"seeds: {count} for {target} in {folder}")


main()
