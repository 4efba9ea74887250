"""Black-box tests: the real safety-dongle binary, driven over stdio by the
official MCP Python SDK.

Each test starts its own server. Every tools/call answer is checked by
`dongle_client.check_envelope` (one text content, schema-valid envelope, isError
matching the error code's recoverability), so the schema assertions run on
every envelope below, not only in the tests that name them.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError
from mcp.types import CallToolResult, TextContent

from dongle_client import (
    READ_TOOL_BY_MODE,
    SCHEMA_DIR,
    SEMANTIC_TOOLS,
    TOOLS_BY_MODE,
    UNIFIED_TOOL,
    Dongle,
    check_envelope,
    introspection_validator,
    operation_result_validator,
    serve,
)

pytestmark = pytest.mark.anyio

MODES = ["semantic", "single", "all"]

PROTOCOL_VERSION = "1.0.0-draft"
LIMITS = {
    "max_request_size": 1_048_576,
    "max_string_length": 1_048_576,
    "max_array_elements": 10_000,
    "max_nesting_depth": 32,
}
# (readOnlyHint, destructiveHint) per tool (mcp-integration.md 2.3).
ANNOTATIONS = {
    "mcp_aql_create": (False, False),
    "mcp_aql_read": (True, False),
    "mcp_aql_update": (False, True),
    "mcp_aql_delete": (False, True),
    "mcp_aql_execute": (False, True),
    "mcp_aql": (False, True),
}
LIST_OPERATIONS = {"operation": "introspect", "params": {"query": "operations"}}


# --------------------------------------------------------------------------
# tools/list
# --------------------------------------------------------------------------


# introspect's parameters, in the order introspection lists them: what to
# list or detail, the list's filters, its paging, and field selection.
INTROSPECT_PARAMS = ["query", "name", "name_pattern", "category", "endpoint", "source", "first", "after", "last", "before", "fields"]


async def assert_tool_surface(dongle: Dongle, mode: str) -> None:
    tools = await dongle.list_tools()
    names = [tool.name for tool in tools]
    assert len(names) == len(set(names)), f"duplicate tools: {names}"
    assert set(names) == set(TOOLS_BY_MODE[mode])

    schemas = []
    for tool in tools:
        read_only, destructive = ANNOTATIONS[tool.name]
        assert tool.annotations is not None, f"{tool.name} has no annotations"
        assert tool.annotations.read_only_hint is read_only, tool.name
        assert tool.annotations.destructive_hint is destructive, tool.name
        assert tool.description and "introspect" in tool.description, tool.name

        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["required"] == ["operation"]
        assert set(schema["properties"]) == {"operation", "params", "operations"}
        assert schema["properties"]["operation"]["type"] == "string"
        assert schema["properties"]["params"]["type"] == "object"
        assert schema["properties"]["operations"]["type"] == "array", "batches are advertised"
        schemas.append(schema)
    assert all(schema == schemas[0] for schema in schemas), "tools must share one input schema"


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_per_endpoint_flag(mode: str) -> None:
    async with serve(mode) as dongle:
        await assert_tool_surface(dongle, mode)


@pytest.mark.parametrize("mode", ["single", "all"])
async def test_tools_list_from_env_var(mode: str) -> None:
    async with serve(args=["serve"], env={"MCP_AQL_ENDPOINT_MODE": mode}) as dongle:
        await assert_tool_surface(dongle, mode)
        data = await dongle.introspect(READ_TOOL_BY_MODE[mode], query="operations")
        assert data["_protocol"]["mode"] == mode


async def test_endpoints_flag_wins_over_env_var() -> None:
    async with serve("single", env={"MCP_AQL_ENDPOINT_MODE": "all"}) as dongle:
        await assert_tool_surface(dongle, "single")


async def test_no_subcommand_serves_stdio_in_semantic_mode() -> None:
    async with serve(args=[]) as dongle:
        assert dongle.initialize_result.server_info.name == "safety-dongle"
        assert dongle.initialize_result.capabilities.tools is not None
        await assert_tool_surface(dongle, "semantic")
        data = await dongle.introspect(query="operations")
        assert data["_protocol"]["mode"] == "semantic"


async def test_tool_not_exposed_in_mode_is_a_protocol_error() -> None:
    async with serve("semantic") as dongle:
        with pytest.raises(MCPError):
            await dongle.session.call_tool(UNIFIED_TOOL, LIST_OPERATIONS)
        # The session survives the refusal.
        await dongle.introspect(query="operations")


# --------------------------------------------------------------------------
# introspect
# --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_introspect_operations_list(mode: str) -> None:
    async with serve(mode) as dongle:
        data = await dongle.introspect(READ_TOOL_BY_MODE[mode], query="operations")

    protocol = data["_protocol"]
    assert protocol["version"] == PROTOCOL_VERSION
    assert protocol["conformance"] in ("level-1", "level-2")
    assert protocol["mode"] == mode
    assert "execution_safety_loop" in protocol["capabilities"]
    limits = protocol["limits"]
    for key, value in LIMITS.items():
        assert limits[key] == value, key
    assert isinstance(limits["max_response_size"], int) and limits["max_response_size"] > 0
    assert isinstance(protocol["concurrency"], str) and protocol["concurrency"]

    by_name = {op["name"]: op for op in data["operations"]}
    assert len(by_name) == len(data["operations"]), "duplicate operation names"
    introspect = by_name["introspect"]
    assert introspect["semantic_category"] == "READ"
    assert introspect["endpoint"] == "read"
    assert introspect["description"]


async def test_introspect_through_unified_tool_in_all_mode() -> None:
    async with serve("all") as dongle:
        via_read = await dongle.introspect("mcp_aql_read", query="operations")
        via_unified = await dongle.introspect(UNIFIED_TOOL, query="operations")
    assert via_read == via_unified


@pytest.mark.parametrize("mode", MODES)
async def test_introspect_operation_details(mode: str) -> None:
    read_tool = READ_TOOL_BY_MODE[mode]
    async with serve(mode) as dongle:
        data = await dongle.introspect(read_tool, query="operations", name="introspect")
        operation = data["operation"]
        assert operation["name"] == "introspect"
        assert operation["semantic_category"] == "READ"
        assert operation["endpoint"] == "read"
        assert operation["mcpTool"] == read_tool
        assert operation["permissions"] == {"readOnly": True, "destructive": False}
        assert operation["description"]
        assert operation["returns"]["name"]

        params = {p["name"]: p for p in operation["parameters"]}
        assert list(params) == INTROSPECT_PARAMS
        assert params["query"]["type"] == "string"
        assert params["query"]["required"] is True
        assert sorted(params["query"]["enum"]) == ["operations", "types"]
        assert params["name"]["type"] == "string"
        assert params["name"]["required"] is False
        assert "enum" not in params["name"]

        # Every advertised example is a request the server accepts.
        for example in operation.get("examples", []):
            reply = await dongle.call(read_tool, example["request"])
            assert reply.success, (example, reply.envelope)


async def test_introspect_unknown_operation_name_is_null() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call(
            "mcp_aql_read",
            {"operation": "introspect", "params": {"query": "operations", "name": "no_such_op"}},
        )
    assert reply.success
    assert reply.is_error is False
    assert reply.data == {"operation": None}


async def test_introspect_types_list_and_details() -> None:
    async with serve("semantic") as dongle:
        data = await dongle.introspect(query="types")
        kinds = {t["name"]: t["kind"] for t in data["types"]}
        assert len(kinds) == len(data["types"]), "duplicate type names"
        assert kinds["SemanticCategory"] == "enum"
        assert kinds["OperationResult"] == "union"
        assert kinds["OperationInput"] == "object"

        category = (await dongle.introspect(query="types", name="SemanticCategory"))["type"]
        assert category["name"] == "SemanticCategory"
        assert category["kind"] == "enum"
        assert category["values"] == ["CREATE", "READ", "UPDATE", "DELETE", "EXECUTE"]

        result = (await dongle.introspect(query="types", name="OperationResult"))["type"]
        assert result["kind"] == "union"
        assert len(result["members"]) >= 2
        for member in result["members"]:
            detail = (await dongle.introspect(query="types", name=member))["type"]
            assert detail is not None, f"union member {member} is not a described type"

        request = (await dongle.introspect(query="types", name="OperationInput"))["type"]
        assert request["kind"] == "object"
        fields = {f["name"]: f for f in request["fields"]}
        assert fields["operation"]["type"] == "string"
        assert fields["operation"]["required"] is True
        assert fields["params"]["type"] == "object"
        assert fields["params"]["required"] is False

        # Every listed type has details of the same kind.
        for name, kind in kinds.items():
            detail = (await dongle.introspect(query="types", name=name))["type"]
            assert detail["name"] == name
            assert detail["kind"] == kind


async def test_introspect_unknown_type_is_null() -> None:
    async with serve("semantic") as dongle:
        data = await dongle.introspect(query="types", name="NoSuchType")
    assert data == {"type": None}


async def test_top_level_parameter_placement() -> None:
    async with serve("semantic") as dongle:
        nested = await dongle.introspect(query="operations")
        top = await dongle.call("mcp_aql_read", {"operation": "introspect", "query": "operations"})
        assert top.data == nested

        detail = await dongle.call(
            "mcp_aql_read", {"operation": "introspect", "query": "operations", "name": "introspect"}
        )
        assert detail.data["operation"]["name"] == "introspect"

        # params.x is looked up before top-level x.
        both = await dongle.call(
            "mcp_aql_read",
            {"operation": "introspect", "query": "operations", "params": {"query": "types"}},
        )
        assert "types" in both.data


async def test_underscore_keys_are_not_unknown_params() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call(
            "mcp_aql_read",
            {
                "operation": "introspect",
                "_meta": {"request_id": "r-1"},
                "_trace": "top-level",
                "params": {"query": "operations", "_meta": {"note": "ignored"}},
            },
        )
    assert reply.success
    assert "operations" in reply.data


async def test_concurrent_calls_on_one_session() -> None:
    async with serve("all") as dongle:
        replies: list = []

        async def one(i: int) -> None:
            tool = "mcp_aql_read" if i % 2 else UNIFIED_TOOL
            name = "introspect" if i % 3 else None
            params = {"query": "operations", **({"name": name} if name else {})}
            replies.append((name, await dongle.call(tool, {"operation": "introspect", "params": params})))

        async with anyio.create_task_group() as group:
            for i in range(20):
                group.start_soon(one, i)
    assert len(replies) == 20
    for name, reply in replies:
        assert ("operation" in reply.data) if name else ("operations" in reply.data)


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "tool", "available"),
    [
        ("semantic", "mcp_aql_read", ["get_execution_state", "introspect"]),
        ("semantic", "mcp_aql_create", ["record_execution_step", "verify_challenge"]),
        ("semantic", "mcp_aql_delete", []),
        (
            "single",
            UNIFIED_TOOL,
            [
                "abort_execution",
                "complete_execution",
                "confirm_operation",
                "execute_agent",
                "get_execution_state",
                "introspect",
                "record_execution_step",
                "verify_challenge",
            ],
        ),
    ],
)
async def test_unknown_operation(mode: str, tool: str, available: list[str]) -> None:
    async with serve(mode) as dongle:
        reply = await dongle.call(tool, {"operation": "no_such_op", "params": {}})
    assert reply.code == "NOT_FOUND_OPERATION"
    assert reply.is_error is False
    assert reply.details["operation"] == "no_such_op"
    assert sorted(reply.details["available"]) == sorted(available)
    assert "no_such_op" in reply.error["message"]


async def test_endpoint_mismatch() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_create", LIST_OPERATIONS)
    assert reply.code == "VALIDATION_ENDPOINT_MISMATCH"
    assert reply.is_error is True
    assert reply.error["message"] == "Operation 'introspect' must be called via mcp_aql_read, not mcp_aql_create"
    assert reply.details == {
        "operation": "introspect",
        "expected_endpoint": "mcp_aql_read",
        "actual_endpoint": "mcp_aql_create",
    }


@pytest.mark.parametrize("tool", [t for t in SEMANTIC_TOOLS if t != "mcp_aql_read"])
async def test_endpoint_mismatch_on_every_other_semantic_tool_in_all_mode(tool: str) -> None:
    async with serve("all") as dongle:
        reply = await dongle.call(tool, LIST_OPERATIONS)
    assert reply.code == "VALIDATION_ENDPOINT_MISMATCH"
    assert reply.is_error is True
    assert reply.details["expected_endpoint"] == "mcp_aql_read"
    assert reply.details["actual_endpoint"] == tool


@pytest.mark.parametrize(
    "arguments",
    [
        {"operation": "introspect", "params": {}},
        {"operation": "introspect"},
        {"operation": "introspect", "params": {"name": "introspect"}},
    ],
    ids=["empty-params", "no-params", "only-name"],
)
async def test_missing_query(arguments: dict) -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", arguments)
    assert reply.code == "VALIDATION_MISSING_PARAM"
    assert reply.is_error is False
    assert reply.details["param_name"] == "query"
    assert reply.details["operation"] == "introspect"


@pytest.mark.parametrize(
    "arguments",
    [{}, {"params": {"query": "operations"}}],
    ids=["empty-arguments", "params-only"],
)
async def test_missing_operation(arguments: dict) -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", arguments)
    assert reply.code == "VALIDATION_MISSING_PARAM"
    assert reply.is_error is False
    assert reply.details["param_name"] == "operation"
    assert "introspect" in reply.error["message"]


async def test_query_of_wrong_type() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": 5}})
    assert reply.code == "VALIDATION_INVALID_TYPE"
    assert reply.is_error is False
    assert reply.details["param_name"] == "query"
    assert reply.details["expected_type"] == "string"
    assert reply.details["actual_type"] == "integer"


async def test_operation_of_wrong_type() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", {"operation": 5, "params": {"query": "operations"}})
    assert reply.code == "VALIDATION_INVALID_TYPE"
    assert reply.is_error is False
    assert reply.details["param_name"] == "operation"
    assert reply.details["expected_type"] == "string"
    assert reply.details["actual_type"] == "integer"


async def test_query_of_invalid_value() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": "bogus"}})
    assert reply.code == "VALIDATION_INVALID_VALUE"
    assert reply.is_error is False
    assert reply.details["param_name"] == "query"
    assert sorted(reply.details["allowed_values"]) == ["operations", "types"]


async def test_unknown_param() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call(
            "mcp_aql_read", {"operation": "introspect", "params": {"query": "operations", "bogus": 1}}
        )
    assert reply.code == "VALIDATION_UNKNOWN_PARAM"
    assert reply.is_error is True
    assert reply.details["operation"] == "introspect"
    assert reply.details["unknown_params"] == ["bogus"]
    assert reply.details["valid_params"] == INTROSPECT_PARAMS


async def test_unknown_top_level_param() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "query": "operations", "extra": True})
    assert reply.code == "VALIDATION_UNKNOWN_PARAM"
    assert reply.details["unknown_params"] == ["extra"]


async def test_request_size_limit() -> None:
    big = "x" * 1_500_000
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": big}})
        assert reply.code == "VALIDATION_PAYLOAD_TOO_LARGE"
        assert reply.is_error is True
        assert reply.details["limit_type"] == "request_size"
        assert reply.details["limit_value"] == LIMITS["max_request_size"]
        assert reply.details["actual_value"] > len(big)
        # The refusal was addressed to its request; the session goes on.
        assert "operations" in await dongle.introspect(query="operations")


async def test_array_elements_limit() -> None:
    async with serve("semantic") as dongle:
        at_limit = await dongle.call(
            "mcp_aql_read",
            {"operation": "introspect", "params": {"query": "operations", "_items": [0] * 10_000}},
        )
        assert at_limit.success
        reply = await dongle.call(
            "mcp_aql_read",
            {"operation": "introspect", "params": {"query": "operations", "_items": [0] * 10_001}},
        )
    assert reply.code == "VALIDATION_PAYLOAD_TOO_LARGE"
    assert reply.is_error is True
    assert reply.details["limit_type"] == "array_elements"
    assert reply.details["limit_value"] == 10_000
    assert reply.details["actual_value"] == 10_001


def arguments_of_depth(depth: int) -> dict:
    """An introspect request whose arguments object is `depth` levels deep
    (the arguments object is level 1, `params` level 2)."""
    nested: dict = {}
    for _ in range(depth - 3):
        nested = {"a": nested}
    return {"operation": "introspect", "params": {"query": "operations", "_deep": nested}}


async def test_nesting_depth_limit() -> None:
    async with serve("semantic") as dongle:
        at_limit = await dongle.call("mcp_aql_read", arguments_of_depth(32))
        assert at_limit.success
        reply = await dongle.call("mcp_aql_read", arguments_of_depth(33))
    assert reply.code == "VALIDATION_PAYLOAD_TOO_LARGE"
    assert reply.is_error is True
    assert reply.details["limit_type"] == "nesting_depth"
    assert reply.details["limit_value"] == 32
    assert reply.details["actual_value"] == 33


async def test_null_byte_in_string_value() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call("mcp_aql_read", {"operation": "introspect", "params": {"query": "a\u0000b"}})
    assert reply.code == "VALIDATION_INVALID_ENCODING"
    assert reply.is_error is True
    assert reply.details["location"] == "params.query"
    assert reply.details["byte_offset"] == 1


async def test_null_byte_in_key() -> None:
    async with serve("semantic") as dongle:
        reply = await dongle.call(
            "mcp_aql_read", {"operation": "introspect", "params": {"query": "operations", "_k\u0000": 1}}
        )
    assert reply.code == "VALIDATION_INVALID_ENCODING"
    assert reply.is_error is True


# Invalid UTF-8 cannot be sent through the SDK (it encodes str); the Rust
# tests cover it with raw bytes. string_length cannot be reached separately
# with default limits: any string over 1 MiB makes the frame exceed the
# 1 MiB request-size limit first (covered by test_request_size_limit).


# --------------------------------------------------------------------------
# schemas
# --------------------------------------------------------------------------


def test_schemas_are_read_from_the_shared_spec() -> None:
    assert SCHEMA_DIR.name == "schemas" and SCHEMA_DIR.parent.name == "spec"
    assert (SCHEMA_DIR / "operation-result.schema.json").is_file()
    assert (SCHEMA_DIR / "introspection-response.schema.json").is_file()


def test_validators_reject_malformed_envelopes() -> None:
    """The schema checks in check_envelope are not vacuous."""
    result = operation_result_validator()
    assert result.is_valid({"success": True, "data": {}})
    assert result.is_valid({"success": False, "error": {"code": "X", "message": "m"}})
    assert not result.is_valid({"success": True})
    assert not result.is_valid({"success": False, "error": {"code": "lower_case", "message": "m"}})
    assert not result.is_valid({"success": False, "error": {"code": "X", "message": "m", "extra": 1}})
    assert not result.is_valid({"success": True, "data": {}, "surprise": 1})

    introspection = introspection_validator()
    assert introspection.is_valid({"success": True, "data": {"operation": None}})
    assert not introspection.is_valid({"success": True, "data": {"operations": [{"name": "x"}]}})
    assert not introspection.is_valid({"success": True, "data": {"operation": None, "types": []}})


def _result(*texts: str, is_error: bool) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=t) for t in texts], is_error=is_error)


def test_envelope_checker_rejects_bad_framing() -> None:
    """The framing checks in check_envelope are not vacuous either."""
    ok = '{"success":true,"data":{}}'
    recoverable = '{"success":false,"error":{"code":"VALIDATION_MISSING_PARAM","message":"m","details":{"param_name":"p"}}}'
    fatal = '{"success":false,"error":{"code":"VALIDATION_UNKNOWN_PARAM","message":"m","details":{"operation":"o","unknown_params":["x"],"valid_params":[]}}}'
    assert check_envelope(_result(ok, is_error=False), None).success
    assert check_envelope(_result(recoverable, is_error=False), None).code == "VALIDATION_MISSING_PARAM"
    assert check_envelope(_result(fatal, is_error=True), None).code == "VALIDATION_UNKNOWN_PARAM"
    for bad in (
        _result(ok, is_error=True),
        _result(recoverable, is_error=True),
        _result(fatal, is_error=False),
        _result(ok, ok, is_error=False),
        _result(is_error=False),
        _result('{"success":true}', is_error=False),
        # Framed well, but without the details error-codes.md requires.
        _result('{"success":false,"error":{"code":"VALIDATION_MISSING_PARAM","message":"m"}}', is_error=False),
    ):
        with pytest.raises(AssertionError):
            check_envelope(bad, None)
    # A successful introspect answer must also match the introspection schema.
    with pytest.raises(AssertionError):
        check_envelope(_result('{"success":true,"data":{"bogus":1}}', is_error=False), {"operation": "introspect"})


@pytest.mark.parametrize("mode", MODES)
async def test_every_introspect_answer_matches_both_schemas(mode: str) -> None:
    tool = READ_TOOL_BY_MODE[mode]
    requests = [
        {"query": "operations"},
        {"query": "operations", "name": "introspect"},
        {"query": "operations", "name": "nope"},
        {"query": "types"},
        {"query": "types", "name": "nope"},
    ]
    async with serve(mode) as dongle:
        types = (await dongle.introspect(tool, query="types"))["types"]
        requests += [{"query": "types", "name": t["name"]} for t in types]
        for params in requests:
            reply = await dongle.call(tool, {"operation": "introspect", "params": params})
            # check_envelope already validated; assert again explicitly here.
            assert operation_result_validator().is_valid(reply.envelope)
            assert introspection_validator().is_valid(reply.envelope), params
