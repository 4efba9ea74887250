"""Discovery that tells the truth about what is loaded, seen by the official
MCP Python SDK over stdio and streamable HTTP (issue 35, items 2 and 7):

- the endpoint tools' descriptions name the operations registered now,
  adapters' included, and a reload that changes them sends
  `notifications/tools/list_changed` (the server declares
  `tools.listChanged`);
- the `source` filter takes an adapter's name with `-` or `_`, and refuses a
  source that is not loaded, listing those that are;
- field-selected introspection answers validate against the spec's schema
  (`check_envelope` validates every introspect envelope, batch items too),
  and `minimal`, `standard` and `full` keep different things;
- `fields` is typed `FieldSelection`, a described type;
- a page size over the maximum is clamped, not refused;
- adapter operations have an example, a call the adapter sends as it is;
- the execution operations say their lifecycle, and it is the one they
  follow.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest
from mcp.types import ToolListChangedNotification

from dongle_client import CALL_TIMEOUT, Dongle, serve, serve_http

pytestmark = pytest.mark.anyio

CORE_STATES = ["pending", "running", "completed", "failed", "cancelled"]


def adapter(name: str, base_url: str, operations: str) -> str:
    """An adapter file named `name` whose operations (YAML under
    `operations:`) call `base_url`."""
    return (
        f'---\nname: {name}\ntype: adapter\nversion: "1.0.0"\ndescription: "A test adapter"\n'
        f'target:\n  base_url: "{base_url}"\n  transport: http\n  protocol: rest\n  serialization: json\n'
        f"operations:\n{operations}---\n\n# {name}\n"
    )


TRACKER_OPERATIONS = """  read:
    - name: get_issue
      maps_to: "GET /repos/{owner}/{repo}/issues/{number}"
      params:
        owner: {type: string, required: true}
        repo: {type: string, required: true}
        number: {type: integer, required: true}
        state: {type: string, enum: [open, closed], required: true}
        verbose: {type: boolean}
    - name: list_labels
      maps_to: "GET /labels"
  delete:
    - name: delete_issue
      maps_to: "DELETE /issues/{number}"
      params:
        number: {type: integer, required: true}
"""

WIKI_OPERATIONS = """  delete:
    - name: delete_page
      maps_to: "DELETE /pages/{slug}"
      params:
        slug: {type: string, required: true}
"""


class Folder:
    """A config file whose adapters live in a folder that a serving dongle
    watches; adapter files are put there whole (written beside, then
    renamed in), as an editor saves them."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="dongle-discovery-"))
        self.adapters = self.root / "adapters"
        self.adapters.mkdir()
        self.config = self.root / "config.toml"
        self.config.write_text(f"adapters = [{json.dumps(str(self.adapters))}]\n")

    def put(self, file: str, text: str) -> None:
        staged = self.root / f".{file}"
        staged.write_text(text)
        os.replace(staged, self.adapters / file)

    def remove(self, file: str) -> None:
        (self.adapters / file).unlink()

    @property
    def args(self) -> list[str]:
        return ["serve", "--config", str(self.config)]


class Notifications:
    """The notifications a session receives, to wait on."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[object](100)

    async def handler(self, message: object) -> None:
        await self.send.send(message)

    async def next_tools_change(self) -> None:
        with anyio.fail_after(CALL_TIMEOUT):
            while not isinstance(await self.receive.receive(), ToolListChangedNotification):
                pass


@asynccontextmanager
async def connect(transport: str, args: list[str], notifications: Notifications | None = None):
    handler = notifications.handler if notifications else None
    if transport == "stdio":
        async with serve(args=args, message_handler=handler) as dongle:
            yield dongle
    else:
        async with serve_http(args, message_handler=handler) as dongle:
            yield dongle


async def descriptions(dongle: Dongle) -> dict[str, str]:
    return {tool.name: tool.description or "" for tool in await dongle.list_tools()}


async def until_described(dongle: Dongle, notifications: Notifications, holds: Callable[[dict[str, str]], bool]) -> dict[str, str]:
    """Waits for tools/list_changed notifications until the tools' descriptions
    satisfy `holds` (a reload may take more than one)."""
    while True:
        await notifications.next_tools_change()
        described = await descriptions(dongle)
        if holds(described):
            return described


def supported(description: str) -> str:
    return next(line for line in description.splitlines() if line.startswith("Supported operations: "))


# --------------------------------------------------------------------------
# tools/list and tools/list_changed
# --------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_tool_descriptions_name_what_is_loaded_and_a_reload_announces_changes(transport: str) -> None:
    folder = Folder()
    folder.put("tracker-adapter.md", adapter("tracker-api", "http://127.0.0.1:9", TRACKER_OPERATIONS))
    notifications = Notifications()
    async with connect(transport, folder.args, notifications) as dongle:
        tools = dongle.initialize_result.capabilities.tools
        assert tools is not None and tools.list_changed is True, "tools.listChanged is declared"

        described = await descriptions(dongle)
        assert supported(described["mcp_aql_delete"]) == "Supported operations: tracker_api__delete_issue"
        assert "tracker_api__* (2)" in supported(described["mcp_aql_read"]), described["mcp_aql_read"]
        assert "none registered" in described["mcp_aql_update"], "nothing is claimed that is not there"
        # What the descriptions say is what introspection lists.
        listed = await dongle.introspect(query="operations", source="tracker-api")
        assert sorted(op["name"] for op in listed["operations"]) == ["tracker_api__delete_issue", "tracker_api__get_issue", "tracker_api__list_labels"]

        folder.put("wiki-adapter.md", adapter("wiki-api", "http://127.0.0.1:9", WIKI_OPERATIONS))
        described = await until_described(dongle, notifications, lambda d: "wiki_api__delete_page" in d["mcp_aql_delete"])
        assert supported(described["mcp_aql_delete"]) == "Supported operations: tracker_api__delete_issue, wiki_api__delete_page"
        assert (await dongle.introspect(query="operations", name="wiki_api__delete_page"))["operation"] is not None

        folder.remove("tracker-adapter.md")
        described = await until_described(dongle, notifications, lambda d: "tracker_api" not in d["mcp_aql_delete"])
        assert supported(described["mcp_aql_delete"]) == "Supported operations: wiki_api__delete_page"
        assert "tracker_api" not in described["mcp_aql_read"], described["mcp_aql_read"]
        reply = await dongle.call("mcp_aql_delete", {"operation": "tracker_api__delete_issue", "params": {"number": 1}})
        assert reply.code == "NOT_FOUND_OPERATION", "the tools and the router agree on what is gone"


async def test_the_unified_tool_lists_loaded_operations_by_category() -> None:
    folder = Folder()
    folder.put("tracker-adapter.md", adapter("tracker-api", "http://127.0.0.1:9", TRACKER_OPERATIONS))
    async with serve(args=[*folder.args, "--endpoints", "single"]) as dongle:
        (unified,) = await dongle.list_tools()
    lines = {line.split(":", 1)[0]: line for line in (unified.description or "").splitlines()}
    assert lines["DELETE"] == "DELETE: tracker_api__delete_issue"
    assert lines["READ"] == "READ: get_execution_state, introspect, tracker_api__* (2)"


# --------------------------------------------------------------------------
# the source filter
# --------------------------------------------------------------------------


async def test_a_source_is_named_either_way_and_an_unknown_one_is_refused() -> None:
    folder = Folder()
    folder.put("tracker-adapter.md", adapter("tracker-api", "http://127.0.0.1:9", TRACKER_OPERATIONS))
    async with serve(args=folder.args) as dongle:
        hyphen = await dongle.introspect(query="operations", source="tracker-api")
        underscore = await dongle.introspect(query="operations", source="tracker_api")
        assert hyphen["operations"] == underscore["operations"] and len(hyphen["operations"]) == 3
        assert hyphen["_protocol"]["pageInfo"]["totalCount"] == 3
        builtin = await dongle.introspect(query="operations", source="builtin")
        assert all("__" not in op["name"] for op in builtin["operations"]) and builtin["operations"]

        for unknown in ["tracker", "github_api", "TRACKER-API"]:
            reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": "operations", "source": unknown}})
            assert reply.code == "VALIDATION_INVALID_VALUE", reply.envelope
            assert reply.is_error is False, "the agent can correct it on its own"
            assert reply.details["param_name"] == "source"
            assert reply.details["allowed_values"] == ["builtin", "tracker-api"], reply.details
            assert reply.details["value"] == unknown


# --------------------------------------------------------------------------
# field selection on introspection
# --------------------------------------------------------------------------


async def test_field_selected_introspection_validates_and_the_presets_differ() -> None:
    async with serve() as dongle:
        # Every answer below passed check_envelope: the introspection schema.
        def details(fields):
            return dongle.introspect(query="operations", name="execute_agent", **({"fields": fields} if fields is not None else {}))

        whole = (await details(None))["operation"]
        full = (await details("full"))["operation"]
        standard = (await details("standard"))["operation"]
        minimal = (await details("minimal"))["operation"]
        assert full == whole, "full is the answer without fields"
        assert "examples" in full and "lifecycle" in full
        assert standard != full and "examples" not in standard, "standard leaves the examples out"
        assert standard["lifecycle"] == full["lifecycle"] and standard["parameters"] == full["parameters"]
        required = {"name", "semantic_category", "endpoint", "mcpTool", "description", "permissions", "parameters", "returns"}
        assert set(minimal) == required, "minimal is what the schema requires, never {}"
        assert all(set(p) == {"name", "type", "required"} for p in minimal["parameters"]), minimal["parameters"]
        assert [p["name"] for p in minimal["parameters"]] == [p["name"] for p in full["parameters"]]

        paths = (await details(["operation.examples"]))["operation"]
        assert set(paths) == required | {"examples"} and paths["examples"] == full["examples"]
        unknown = await dongle.introspect(query="operations", name="no_such_operation", fields="minimal")
        assert unknown == {"operation": None}

        listing = await dongle.introspect(query="operations", fields=["name"])
        assert all(set(op) == {"name", "semantic_category", "endpoint", "description"} for op in listing["operations"])
        assert listing["_protocol"]["version"], "metadata is never trimmed"
        types = await dongle.introspect(query="types", fields="minimal")
        assert all(set(t) == {"name", "kind"} for t in types["types"])
        described = await dongle.introspect(query="types", fields="standard")
        assert all("description" in t for t in described["types"])
        enum = await dongle.introspect(query="types", name="SemanticCategory", fields="minimal")
        assert enum["type"]["values"] == ["CREATE", "READ", "UPDATE", "DELETE", "EXECUTE"]

        # A batch of selected introspections: check_envelope validates each item.
        batch = await dongle.call("mcp_aql_read", {"operations": [
            {"operation": "introspect", "params": {"query": "operations", "name": "introspect", "fields": "minimal"}},
            {"operation": "introspect", "params": {"query": "types", "fields": ["name"]}},
        ]})
        assert [item["result"]["success"] for item in batch.envelope["results"]] == [True, True]


async def test_fields_is_typed_field_selection_a_described_type() -> None:
    async with serve() as dongle:
        listing = await dongle.introspect(query="operations")
        for operation in listing["operations"]:
            parameters = (await dongle.introspect(query="operations", name=operation["name"]))["operation"]["parameters"]
            fields = next(p for p in parameters if p["name"] == "fields")
            assert fields["type"] == "FieldSelection" and fields["required"] is False, fields
            assert all(p["type"] != "any" for p in parameters), (operation["name"], parameters)
        introspect_fields = next(p for p in (await dongle.introspect(query="operations", name="introspect"))["operation"]["parameters"] if p["name"] == "fields")
        assert "standard keeps operation: parameters, lifecycle" in introspect_fields["description"], introspect_fields

        kinds = {t["name"]: t["kind"] for t in (await dongle.introspect(query="types"))["types"]}
        assert kinds["FieldSelection"] == "object"
        selection = (await dongle.introspect(query="types", name="FieldSelection"))["type"]
        members = {f["name"]: f for f in selection["fields"]}
        assert members["presets"]["enum"] == ["minimal", "standard", "full"]
        assert members["fields"]["type"] == "array"

        # Both forms the type describes are accepted; anything else is refused.
        assert await dongle.introspect(query="types", fields="minimal")
        assert await dongle.introspect(query="types", fields=["name"])
        reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": "types", "fields": {"name": True}}})
        assert reply.code == "VALIDATION_INVALID_TYPE" and reply.details["param_name"] == "fields"


# --------------------------------------------------------------------------
# paging
# --------------------------------------------------------------------------


async def test_page_sizes_over_the_maximum_are_clamped() -> None:
    folder = Folder()
    many = "  read:\n" + "".join(f'    - {{name: get_item_{i:03}, maps_to: "GET /items/{i}"}}\n' for i in range(150))
    folder.put("bulk-adapter.md", adapter("bulk-api", "http://127.0.0.1:9", many))
    async with serve(args=folder.args) as dongle:
        first = await dongle.introspect(query="operations", source="bulk-api", first=500)
        assert len(first["operations"]) == 100
        info = first["_protocol"]["pageInfo"]
        assert (info["hasNextPage"], info["totalCount"], info["endCursor"]) == (True, 150, "bulk_api__get_item_099")
        last = await dongle.introspect(query="operations", source="bulk-api", last=1000)
        assert [op["name"] for op in last["operations"]][0] == "bulk_api__get_item_050" and len(last["operations"]) == 100
        rest = await dongle.introspect(query="operations", source="bulk-api", first=100000, after=info["endCursor"])
        assert len(rest["operations"]) == 50 and rest["_protocol"]["pageInfo"]["hasNextPage"] is False
        for nothing in (0, -5):
            reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": "operations", "first": nothing}})
            assert reply.code == "VALIDATION_INVALID_VALUE" and reply.details["param_name"] == "first"


# --------------------------------------------------------------------------
# adapter examples
# --------------------------------------------------------------------------


class Api:
    """A local JSON API that records the requests it is sent."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                api.requests.append((self.command, self.path))
                body = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = answer  # noqa: N815 (http.server's name)
            do_DELETE = answer  # noqa: N815

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()


def accepted_by(parameters: list[dict], params: dict) -> bool:
    """Whether `params` is a call the parameter definitions allow: every
    required one present, nothing undeclared, each value of its type and
    among its allowed values."""
    types = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}
    by_name = {p["name"]: p for p in parameters}
    return (
        all(p["name"] in params for p in parameters if p["required"])
        and all(name in by_name for name in params)
        and all(isinstance(value, types[by_name[name]["type"]]) for name, value in params.items())
        and all(value in by_name[name].get("enum", [value]) for name, value in params.items())
    )


async def test_adapter_operations_have_examples_that_are_calls_the_adapter_sends() -> None:
    api = Api()
    try:
        folder = Folder()
        folder.put("tracker-adapter.md", adapter("tracker-api", api.url, TRACKER_OPERATIONS))
        async with serve(args=folder.args) as dongle:
            listed = await dongle.introspect(query="operations", source="tracker-api")
            examples = {}
            for operation in listed["operations"]:
                details = (await dongle.introspect(query="operations", name=operation["name"]))["operation"]
                assert len(details["examples"]) == 1, details
                request = details["examples"][0]["request"]
                assert request["operation"] == operation["name"]
                assert accepted_by(details["parameters"], request["params"]), (details["parameters"], request)
                examples[operation["name"]] = request

            assert examples["tracker_api__get_issue"]["params"] == {"owner": "<owner>", "repo": "<repo>", "number": 1, "state": "open"}
            assert examples["tracker_api__list_labels"]["params"] == {}
            # The reads are sent as they are, and reach the API.
            for name in ("tracker_api__get_issue", "tracker_api__list_labels"):
                reply = await dongle.call("mcp_aql_read", examples[name])
                assert reply.data == {"ok": True}, reply.envelope
        assert api.requests == [("GET", "/repos/%3Cowner%3E/%3Crepo%3E/issues/1?state=open"), ("GET", "/labels")]
    finally:
        api.close()


# --------------------------------------------------------------------------
# the execution lifecycle
# --------------------------------------------------------------------------


async def test_the_execution_operations_say_their_lifecycle_and_follow_it() -> None:
    async with serve() as dongle:
        lifecycles = {}
        for operation in (await dongle.introspect(query="operations"))["operations"]:
            details = (await dongle.introspect(query="operations", name=operation["name"]))["operation"]
            lifecycles[operation["name"]] = details.get("lifecycle")
        managing = {name for name, lifecycle in lifecycles.items() if lifecycle}
        assert managing == {"execute_agent", "complete_execution", "abort_execution"}, lifecycles
        for name in managing:
            assert lifecycles[name] == {"states": CORE_STATES, "supports_cancel": True, "supports_retry": False, "progress_reporting": False}

        execute = {"operation": "execute_agent", "params": {"element_name": "lifecycle-test"}}
        started = (await dongle.call("mcp_aql_execute", execute)).data
        assert started["status"] == "running"
        cancelled = (await dongle.call("mcp_aql_execute", {"operation": "abort_execution", "params": {"element_name": "lifecycle-test"}})).data
        assert cancelled["status"] == "cancelled", "supports_cancel: abort_execution cancels"

        again = (await dongle.call("mcp_aql_execute", execute)).data
        failed = (await dongle.call("mcp_aql_execute", {"operation": "complete_execution", "params": {"element_name": "lifecycle-test", "outcome": "failure"}})).data
        assert failed["status"] == "failed"
        retried = (await dongle.call("mcp_aql_execute", execute)).data
        assert retried["execution_id"] not in (started["execution_id"], again["execution_id"]), "no retry: a failed execution stays failed, a new one starts"
        assert retried["status"] == "running"
