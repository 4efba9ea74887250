"""Downstream servers behind the dongle, seen by an MCP client: the agent's
`tools/list` names what sits behind it by source (a glob and a count when
a source has several operations on an endpoint), so it grows with the
servers, not their tools, and stays a fraction of what the same servers
list when connected directly. The reference servers come from `tests/downstream` (installed by
`tests/downstream/install.sh`, which `tests/run-all.sh` runs first)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from dongle_client import REPO_ROOT, SESSION_TIMEOUT, serve

pytestmark = pytest.mark.anyio

DOWNSTREAM_BIN = REPO_ROOT / "tests" / "downstream" / "node_modules" / ".bin"


def tools_bytes(tools) -> int:
    return len(json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools], separators=(",", ":")))


def reference_servers(root: Path) -> dict[str, dict]:
    assert (DOWNSTREAM_BIN / "mcp-server-everything").exists(), "run tests/downstream/install.sh first"
    path = f"{DOWNSTREAM_BIN}:{os.environ.get('PATH', '')}"
    return {
        "everything": {"command": str(DOWNSTREAM_BIN / "mcp-server-everything"), "args": [], "env": {"PATH": path}},
        "filesystem": {"command": str(DOWNSTREAM_BIN / "mcp-server-filesystem"), "args": [str(root)], "env": {"PATH": path}},
    }


async def listed_directly(entry: dict) -> list:
    parameters = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])
    with anyio.fail_after(SESSION_TIMEOUT):
        async with stdio_client(parameters) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return (await session.list_tools()).tools


async def test_the_agent_sees_the_same_few_tools_whatever_sits_behind() -> None:
    root = Path(tempfile.mkdtemp(prefix="dongle-files-"))
    servers = reference_servers(root)
    direct_tools = [tool for entry in servers.values() for tool in await listed_directly(entry)]
    direct = tools_bytes(direct_tools)

    async with serve() as alone:
        bare = await alone.list_tools()

    client_config = root / "mcp.json"
    client_config.write_text(json.dumps({"mcpServers": servers}))
    async with serve(args=["serve", "--import-client-config", str(client_config)]) as fronting:
        behind = []
        for source in ("everything", "filesystem"):
            listed = await fronting.introspect(query="operations", source=source, first=100)
            assert listed["_protocol"]["pageInfo"]["hasNextPage"] is False
            behind += [op for op in listed["operations"] if op["name"].startswith(f"{source}__")]
        assert len(behind) == len(direct_tools), "every downstream tool is an operation"
        fronted = await fronting.list_tools()

    assert [t.name for t in fronted] == [t.name for t in bare]
    # Each endpoint names the operations behind it: one by name, several
    # as their source's glob with how many there are.
    categories = {"mcp_aql_create": "CREATE", "mcp_aql_read": "READ", "mcp_aql_update": "UPDATE", "mcp_aql_delete": "DELETE", "mcp_aql_execute": "EXECUTE"}
    for tool in fronted:
        described = tool.description or ""
        for source in ("everything", "filesystem"):
            on_endpoint = [op["name"] for op in behind if op["name"].startswith(f"{source}__") and op["semantic_category"] == categories[tool.name]]
            if len(on_endpoint) == 1:
                assert on_endpoint[0] in described, described
            elif on_endpoint:
                assert f"{source}__* ({len(on_endpoint)})" in described, described
            else:
                assert f"{source}__" not in described, described
    reduction = 1 - tools_bytes(fronted) / direct
    assert reduction >= 0.85, f"{tools_bytes(fronted)} B behind the dongle vs {direct} B direct: {reduction:.1%}"
