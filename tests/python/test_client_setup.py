"""What an MCP client meets when it sets the server up: the streamable-HTTP
session ends cleanly, and the config file can be named by the environment
for clients (such as MCP Inspector) that take `--config` for themselves."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from dongle_client import BIN, CALL_TIMEOUT, SESSION_TIMEOUT, check_envelope, serve

pytestmark = pytest.mark.anyio


def start_http_server(data_dir: str) -> tuple[subprocess.Popen[str], str]:
    """Starts `serve --http` on a free loopback port; returns it and its URL."""
    server = subprocess.Popen(
        [str(BIN), "serve", "--http", "127.0.0.1:0", "--data-dir", data_dir],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SAFETY_DONGLE_LOG": "info"},
    )
    assert server.stderr is not None
    for line in server.stderr:
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        if found:
            return server, found.group(0)
    server.kill()
    raise AssertionError("the server exited before announcing its address")


async def test_http_session_end_is_accepted_by_the_sdk(caplog: pytest.LogCaptureFixture) -> None:
    data_dir = tempfile.mkdtemp(prefix="dongle-test-")
    server, url = start_http_server(data_dir)
    try:
        caplog.set_level(logging.DEBUG, logger="mcp")
        with anyio.fail_after(SESSION_TIMEOUT):
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    arguments = {"operation": "introspect", "params": {"query": "operations"}}
                    with anyio.fail_after(CALL_TIMEOUT):
                        result = await session.call_tool("mcp_aql_read", arguments)
                    assert check_envelope(result, arguments).success
        # Leaving the transport sends DELETE; the SDK warns on any answer but
        # 200, 204 or 405.
        failures = [r.getMessage() for r in caplog.records if "termination" in r.getMessage().lower()]
        assert failures == [], failures
        assert any(r.levelno == logging.DEBUG for r in caplog.records), "the SDK's own logs were captured"
    finally:
        server.kill()
        server.wait()


def write_config(text: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="dongle-config-"))
    config = folder / "config.toml"
    config.write_text(text, encoding="utf-8")
    config.chmod(0o600)
    return config


async def test_the_config_file_can_be_named_by_the_environment() -> None:
    config = write_config('endpoints = "single"\n')
    async with serve(args=["serve"], env={"SAFETY_DONGLE_CONFIG": str(config)}) as dongle:
        assert [tool.name for tool in await dongle.list_tools()] == ["mcp_aql"]
    # `--config` on the command line wins over the environment.
    other = write_config('endpoints = "all"\n')
    async with serve(args=["serve", "--config", str(other)], env={"SAFETY_DONGLE_CONFIG": str(config)}) as dongle:
        assert len(await dongle.list_tools()) == 6


def test_a_config_named_by_the_environment_is_checked_like_one_on_the_command_line() -> None:
    config = write_config('endpoints = "single"\nno_such_key = 1\n')
    refused = subprocess.run(
        [str(BIN), "serve"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SESSION_TIMEOUT,
        env={**os.environ, "SAFETY_DONGLE_CONFIG": str(config)},
    )
    assert refused.returncode == 1, refused
    assert f"{config}:2:1" in refused.stderr, refused.stderr
