"""Calls to a downstream MCP server, as an MCP client sees them (issue 35,
item 6; the runtime contract of seed 004).

The binary fronts `tests/downstream/counter-server.mjs`, which records every
call it receives and exits mid-call when told to. Through the official SDK:
a read the crash lost comes back answered by the restarted server, not as
an error; a call that may not be repeated fails once and reaches the server
once; and at the most verbose log level the dongle's stderr names each
call's start, end, duration and outcome without any argument value.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from dongle_client import REPO_ROOT, serve

pytestmark = pytest.mark.anyio

DOWNSTREAM = REPO_ROOT / "tests" / "downstream"
SECRET = "ghp_python-suite-secret-never-logged"


def received(folder: Path, tool: str) -> list[int]:
    log = folder / "calls.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [entry["pid"] for entry in map(json.loads, lines) if entry["tool"] == tool]


async def test_a_lost_read_is_answered_by_the_restarted_server_and_a_write_is_sent_once() -> None:
    node = DOWNSTREAM / "node_modules" / ".bin" / "node"
    assert node.exists(), "run tests/downstream/install.sh first"
    folder = Path(tempfile.mkdtemp(prefix="dongle-counter-"))
    config = folder / "config.toml"
    config.write_text(
        f'[servers.counter]\ncommand = "{node}"\nargs = ["{DOWNSTREAM / "counter-server.mjs"}"]\n'
        f'env = {{ COUNTER_DIR = "{folder}" }}\nretry_base_ms = 100\n'
    )
    stderr = tempfile.TemporaryFile(mode="w+")
    async with serve(args=["serve", "--config", str(config)], env={"SAFETY_DONGLE_LOG": "trace"}, errlog=stderr) as dongle:
        lookup = {"operation": "counter__lookup", "params": {"key": SECRET}}
        first = await dongle.call("mcp_aql_read", lookup)
        first_pid = first.data["pid"]

        (folder / "crash-next-lookup").touch()
        read = await dongle.call("mcp_aql_read", lookup)
        assert read.success and not read.is_error, read.envelope
        assert read.data["pid"] != first_pid, "answered by the restarted process"
        assert received(folder, "lookup") == [first_pid, first_pid, read.data["pid"]]

        (folder / "crash-next-append").touch()
        append = {"operation": "counter__append", "params": {"key": "k", "value": SECRET}}
        lost = await dongle.call("mcp_aql_execute", append)
        assert lost.code == "TRANSPORT_NETWORK_ERROR" and lost.is_error
        assert len(received(folder, "append")) == 1, "never sent twice"

    stderr.seek(0)
    log = stderr.read()
    assert SECRET not in log, "an argument value reached the log"
    started = [line for line in log.splitlines() if "upstream call started" in line and 'operation="counter__lookup"' in line]
    ended = [line for line in log.splitlines() if "upstream call ended" in line and 'operation="counter__lookup"' in line]
    failed = [line for line in log.splitlines() if "upstream call failed" in line and 'operation="counter__append"' in line]
    retried = [line for line in log.splitlines() if "retrying an upstream call" in line]
    assert len(started) == 2 and all(" DEBUG " in line for line in started), log
    assert len(ended) == 2 and all(" DEBUG " in line and "duration_ms=" in line and 'outcome="ok"' in line for line in ended), log
    assert len(failed) == 1 and " ERROR " in failed[0] and 'code="TRANSPORT_NETWORK_ERROR"' in failed[0], log
    assert retried and all(" WARN " in line and 'operation="counter__lookup"' in line for line in retried), log
