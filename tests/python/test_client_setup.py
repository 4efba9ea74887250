"""What an MCP client meets when it sets the server up: the streamable-HTTP
session ends cleanly, and the config file can be named by the environment
for clients (such as MCP Inspector) that take `--config` for themselves."""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from dongle_client import BIN, SESSION_TIMEOUT, serve, serve_http

pytestmark = pytest.mark.anyio


async def test_http_session_end_is_accepted_by_the_sdk(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp")
    async with serve_http(["serve"]) as dongle:
        assert (await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": "operations"}})).success
    # Leaving the transport sends DELETE; the SDK warns on any answer but
    # 200, 204 or 405.
    failures = [r.getMessage() for r in caplog.records if "termination" in r.getMessage().lower()]
    assert failures == [], failures
    assert any(r.levelno == logging.DEBUG for r in caplog.records), "the SDK's own logs were captured"


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
