"""Helpers for the black-box suite: starting the server, checking envelopes.

Every test starts its own `safety-dongle` process and talks to it over stdio
with the official MCP Python SDK, exactly as an MCP client would. Nothing
here links to or imports the server: only its command line and its MCP
answers are observed.

- The binary is `$SAFETY_DONGLE_BIN`, or `<repo>/target/debug/safety-dongle`.
- The spec's JSON Schemas are read in place from `<repo>/../shared/spec/schemas`
  (never copied into the repository).
- Every envelope a test receives goes through `check_envelope`, which
  validates it against `operation-result.schema.json` (and successful
  introspection answers against `introspection-response.schema.json`,
  field-selected ones included, whether asked alone or as an item of a
  batch), checks each error's and warning's `details` against what the
  spec documents for its code (`spec_details`), and checks the MCP framing:
  exactly one text content, and `isError` set for unrecoverable error codes
  only.
- `serve` talks over stdio, `serve_http` over streamable HTTP (the binary
  on 127.0.0.1 with a port of its choosing); both take a
  `message_handler` that receives the server's notifications.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import tempfile

import anyio
from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters
from mcp.client.session import MessageHandlerFnT
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.types import CallToolResult, TextContent, Tool

from spec_details import envelope_problems

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("SAFETY_DONGLE_BIN") or REPO_ROOT / "target" / "debug" / "safety-dongle")
SCHEMA_DIR = REPO_ROOT.parent / "shared" / "spec" / "schemas"

# Seconds. The binary answers in milliseconds; these only turn a hang into a
# failure instead of a stuck test run.
CALL_TIMEOUT = 15
SESSION_TIMEOUT = 30

# Error codes an agent can fix on its own: these travel with isError false
# (mcp-integration.md 4.1.2); every other code sets isError true.
RECOVERABLE_CODES = frozenset(
    {
        "VALIDATION_MISSING_PARAM",
        "VALIDATION_INVALID_TYPE",
        "VALIDATION_INVALID_VALUE",
        "NOT_FOUND_OPERATION",
        "NOT_FOUND_RESOURCE",
        "PERMISSION_DENIED",
        "PERMISSION_DANGER_LEVEL_DENIED",
        "CONFIRMATION_REQUIRED",
        "RATE_LIMIT_EXCEEDED",
        "RATE_LIMIT_QUOTA_EXHAUSTED",
        "BATCH_VALIDATION_ERROR",
    }
)

SEMANTIC_TOOLS = ["mcp_aql_create", "mcp_aql_read", "mcp_aql_update", "mcp_aql_delete", "mcp_aql_execute"]
UNIFIED_TOOL = "mcp_aql"
TOOLS_BY_MODE = {
    "semantic": SEMANTIC_TOOLS,
    "single": [UNIFIED_TOOL],
    "all": [*SEMANTIC_TOOLS, UNIFIED_TOOL],
}
# The tool that carries READ operations (introspect) in each mode.
READ_TOOL_BY_MODE = {"semantic": "mcp_aql_read", "single": UNIFIED_TOOL, "all": "mcp_aql_read"}


def _load_validator(file_name: str) -> Draft202012Validator:
    path = SCHEMA_DIR / file_name
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@functools.cache
def operation_result_validator() -> Draft202012Validator:
    return _load_validator("operation-result.schema.json")


@functools.cache
def introspection_validator() -> Draft202012Validator:
    return _load_validator("introspection-response.schema.json")


def assert_valid(validator: Draft202012Validator, instance: Any, what: str) -> None:
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        listed = "\n".join(f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
        raise AssertionError(f"{what} does not match its schema:\n{listed}\n{json.dumps(instance, indent=2)}")


@dataclass
class Reply:
    """One tools/call answer: the MCP result and the envelope inside it."""

    result: CallToolResult
    envelope: dict[str, Any]

    @property
    def success(self) -> bool:
        return self.envelope["success"] is True

    @property
    def is_error(self) -> bool:
        return self.result.is_error

    @property
    def data(self) -> Any:
        assert self.success, f"expected success, got {self.envelope}"
        return self.envelope["data"]

    @property
    def error(self) -> dict[str, Any]:
        assert not self.success, f"expected failure, got {self.envelope}"
        return self.envelope["error"]

    @property
    def code(self) -> str:
        return self.error["code"]

    @property
    def details(self) -> dict[str, Any]:
        return self.error.get("details", {})


def check_envelope(result: CallToolResult, arguments: Mapping[str, Any] | None) -> Reply:
    """Checks the framing and schema of a tools/call result; returns the envelope."""
    assert len(result.content) == 1, f"expected exactly one content, got {result.content}"
    content = result.content[0]
    assert isinstance(content, TextContent), f"expected text content, got {content}"
    envelope = json.loads(content.text)
    assert isinstance(envelope, dict), envelope
    assert_valid(operation_result_validator(), envelope, "envelope")
    problems = envelope_problems(envelope)
    assert not problems, f"details not as the spec documents them: {problems}\n{json.dumps(envelope, indent=2)}"
    reply = Reply(result, envelope)
    if reply.success:
        assert result.is_error is False, f"success with isError true: {envelope}"
        if arguments and arguments.get("operation") == "introspect":
            assert_valid(introspection_validator(), envelope, "introspect envelope")
        for item in envelope.get("results", []):
            if item.get("operation") == "introspect" and item["result"].get("success") is True:
                assert_valid(introspection_validator(), item["result"], f"introspect envelope of batch item {item.get('index')}")
    else:
        code = envelope["error"]["code"]
        assert result.is_error is (code not in RECOVERABLE_CODES), (
            f"isError is {result.is_error} for {code}; expected {code not in RECOVERABLE_CODES}"
        )
    return reply


class Dongle:
    """A live MCP session with one safety-dongle process."""

    def __init__(self, session: ClientSession, initialize_result: Any):
        self.session = session
        self.initialize_result = initialize_result

    async def list_tools(self) -> list[Tool]:
        with anyio.fail_after(CALL_TIMEOUT):
            listed = await self.session.list_tools()
        assert listed.next_cursor is None
        return listed.tools

    async def call(self, tool: str, arguments: dict[str, Any] | None, progress: ProgressFnT | None = None) -> Reply:
        """One tools/call; `progress` asks for progress reports (the SDK
        then sends a progress token) and receives them."""
        with anyio.fail_after(CALL_TIMEOUT):
            result = await self.session.call_tool(tool, arguments, progress_callback=progress)
        return check_envelope(result, arguments)

    async def introspect(self, tool: str = "mcp_aql_read", **params: Any) -> Any:
        """Calls introspect with nested params and returns `data` (must succeed)."""
        reply = await self.call(tool, {"operation": "introspect", "params": params})
        return reply.data


@asynccontextmanager
async def serve(
    mode: str | None = None,
    *,
    args: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    message_handler: MessageHandlerFnT | None = None,
    errlog: TextIO = sys.stderr,
) -> AsyncIterator[Dongle]:
    """Starts the binary and yields an initialized session.

    `mode` adds `serve --endpoints MODE`; `args` replaces the whole command
    line; `message_handler` sees every notification the server sends. The SDK passes the server only a minimal environment (PATH, HOME,
    ...) plus `env`, so an `MCP_AQL_ENDPOINT_MODE` set around the test run
    never leaks in. Each server gets its own empty data folder. The
    server's stderr (its log) goes to `errlog`.
    """
    assert_binary()
    if args is None:
        args = ["serve", *(["--endpoints", mode] if mode else [])]
    # A fresh default data folder per server: tests never touch the user's.
    data_home = tempfile.mkdtemp(prefix="dongle-test-")
    server_env = {"SAFETY_DONGLE_LOG": "warn", "XDG_DATA_HOME": data_home, **(env or {})}
    parameters = StdioServerParameters(command=str(BIN), args=args, env=server_env)
    with anyio.fail_after(SESSION_TIMEOUT):
        async with stdio_client(parameters, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=message_handler) as session:
                initialized = await session.initialize()
                yield Dongle(session, initialized)


def assert_binary() -> None:
    assert BIN.is_file() and os.access(BIN, os.X_OK), (
        f"safety-dongle binary not found at {BIN}: run `cargo build` or set SAFETY_DONGLE_BIN"
    )


@asynccontextmanager
async def serve_http(
    args: list[str],
    *,
    env: Mapping[str, str] | None = None,
    message_handler: MessageHandlerFnT | None = None,
) -> AsyncIterator[Dongle]:
    """Starts `safety-dongle ARGS --http 127.0.0.1:0` and yields a session
    over streamable HTTP at the address it announces on stderr (logged at
    info level), with the same environment `serve` gives. The server is
    stopped on the way out."""
    assert_binary()
    data_home = Path(tempfile.mkdtemp(prefix="dongle-test-"))
    log = data_home / "server.log"
    server_env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", str(data_home)),
                  "SAFETY_DONGLE_LOG": "info", "XDG_DATA_HOME": str(data_home), **(env or {})}
    with log.open("wb") as sink:
        server = subprocess.Popen([str(BIN), *args, "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=sink, env=server_env)
    try:
        url = None
        with anyio.fail_after(SESSION_TIMEOUT):
            while url is None:
                assert server.poll() is None, f"the server exited:\n{log.read_text()}"
                found = re.search(r"http://127\.0\.0\.1:[0-9]+/mcp", log.read_text())
                url = found.group(0) if found else None
                await anyio.sleep(0.05)
        with anyio.fail_after(SESSION_TIMEOUT):
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write, message_handler=message_handler) as session:
                    initialized = await session.initialize()
                    yield Dongle(session, initialized)
    finally:
        server.terminate()
        try:
            server.wait(timeout=SESSION_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
