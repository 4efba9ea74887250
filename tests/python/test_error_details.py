"""Errors in the spec's shape, as an MCP client reads them (issue 35, item 3).

The binary runs HTTP adapters against a small API served here on
127.0.0.1 and answers through the official SDK; every envelope passes
`check_envelope`, which holds each error's `details` to what
`error-codes.md` documents for its code. The tests below also read the
fields a client acts on: how long to wait, which limit, which token.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dongle_client import serve
from spec_details import envelope_problems, error_table

pytestmark = pytest.mark.anyio

LIMIT_BYTES = 1024


class _Api(BaseHTTPRequestHandler):
    """404 for /v1/missing, 429 with Retry-After for /v1/limited, a body
    over the adapter's size limit for /v1/big, else a small JSON answer."""

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        routes = {
            "/v1/missing": (404, {"message": "no such repository"}, {}),
            "/v1/limited": (429, {"message": "slow down"}, {"Retry-After": "30"}),
            "/v1/big": (200, {"blob": "x" * (4 * LIMIT_BYTES)}, {}),
        }
        status, body, headers = routes.get(self.path, (200, {"ok": True}, {}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@contextmanager
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


def adapter(name: str, base_url: str, rate_limits: str) -> str:
    return f"""---
name: {name}
type: adapter
version: "1.0.0"
description: "An API served by the test"
target:
  base_url: "{base_url}"
  transport: http
  protocol: rest
  serialization: json
  max_retries: 0
  max_response_bytes: {LIMIT_BYTES}
rate_limits:
{rate_limits}
operations:
  read:
    - {{name: get_missing, maps_to: "GET /missing"}}
    - {{name: get_limited, maps_to: "GET /limited"}}
    - {{name: get_big, maps_to: "GET /big"}}
    - {{name: get_ok, maps_to: "GET /ok"}}
---
"""


@contextmanager
def configured(base_url: str) -> Iterator[list[str]]:
    """A config whose adapters folder holds three adapters of the same API:
    one with a generous API limit, one with an API limit of one request a
    minute, one with a quota that stops after two requests an hour."""
    folder = Path(tempfile.mkdtemp(prefix="dongle-adapters-"))
    (folder / "errors-api-adapter.md").write_text(adapter("errors-api", base_url, "  requests_per_minute: 1000"))
    (folder / "tight-api-adapter.md").write_text(adapter("tight-api", base_url, "  requests_per_minute: 1"))
    quota = "  quotas:\n    limits:\n      - {metric: requests_per_hour, warn: 1, hard_stop: 2}"
    (folder / "quota-api-adapter.md").write_text(adapter("quota-api", base_url, quota))
    config = folder / "config.toml"
    config.write_text(f'adapters = ["{folder}"]\n')
    yield ["serve", "--config", str(config)]


def read(operation: str) -> dict:
    return {"operation": operation, "params": {}}


def seconds_until(text: str) -> float:
    return (datetime.fromisoformat(text.replace("Z", "+00:00")) - datetime.now(timezone.utc)).total_seconds()


async def test_upstream_errors_carry_the_spec_fields_a_client_reads() -> None:
    with api() as base_url, configured(base_url) as args:
        async with serve(args=args) as dongle:
            missing = await dongle.call("mcp_aql_read", read("errors_api__get_missing"))
            assert missing.code == "NOT_FOUND_RESOURCE"
            assert missing.details["http_status"] == 404
            assert missing.details["upstream_error"] == "no such repository"

            limited = await dongle.call("mcp_aql_read", read("errors_api__get_limited"))
            assert limited.code == "RATE_LIMIT_EXCEEDED"
            details = limited.details
            assert (details["limit"], details["window"], details["remaining"]) == (1000, "minute", 0), details
            assert details["retry_after_seconds"] == 30, "the upstream's Retry-After"
            assert 0 < seconds_until(details["resets_at"]) <= 30

            big = await dongle.call("mcp_aql_read", read("errors_api__get_big"))
            assert big.code == "VALIDATION_PAYLOAD_TOO_LARGE"
            assert (big.details["limit_type"], big.details["limit_value"], big.details["unit"]) == ("response_size", LIMIT_BYTES, "bytes")
            assert big.details["actual_value"] > LIMIT_BYTES


async def test_limits_the_runtime_enforces_say_which_limit_and_when_it_resets() -> None:
    with api() as base_url, configured(base_url) as args:
        async with serve(args=args) as dongle:
            assert (await dongle.call("mcp_aql_read", read("tight_api__get_ok"))).success
            refused = await dongle.call("mcp_aql_read", read("tight_api__get_ok"))
            assert refused.code == "RATE_LIMIT_EXCEEDED"
            details = refused.details
            assert (details["limit"], details["window"], details["remaining"]) == (1, "minute", 0), details
            assert 0 < details["retry_after_seconds"] <= 60
            assert abs(seconds_until(details["resets_at"]) - details["retry_after_seconds"]) < 30

            first = await dongle.call("mcp_aql_read", read("quota_api__get_ok"))
            warning = first.envelope["warnings"][0]
            assert warning["code"] == "RATE_LIMIT_QUOTA_WARNING"
            assert (warning["details"]["warn_threshold"], warning["details"]["hard_stop_threshold"]) == (1, 2)
            assert (await dongle.call("mcp_aql_read", read("quota_api__get_ok"))).success
            exhausted = await dongle.call("mcp_aql_read", read("quota_api__get_ok"))
            assert exhausted.code == "RATE_LIMIT_QUOTA_EXHAUSTED"
            details = exhausted.details
            assert (details["metric"], details["current"], details["hard_stop_threshold"]) == ("requests_per_hour", 2, 2), details
            assert 0 < seconds_until(details["resets_at"]) <= 3600


async def test_tokens_and_lockouts_name_the_token_and_the_wait() -> None:
    async with serve() as dongle:
        unknown = "00000000-0000-4000-8000-000000000000"
        invalid = await dongle.call("mcp_aql_create", {"operation": "verify_challenge", "params": {"challenge_id": unknown, "code": "x"}})
        assert invalid.code == "TOKEN_INVALID"
        assert invalid.details == {"token": unknown}

        # A denied step blocks the agent; its challenge takes wrong codes
        # until the agent is locked out.
        await dongle.call("mcp_aql_execute", {"operation": "execute_agent", "params": {"element_name": "guesser"}})
        denied = await dongle.call("mcp_aql_create", {"operation": "record_execution_step", "params": {"element_name": "guesser", "nextActionHint": "executing shell command: sudo rm -rf /"}})
        challenge = next(n for n in denied.data["notifications"] if n["type"] == "danger_zone")["metadata"]["verificationId"]
        attempt = {"operation": "verify_challenge", "params": {"challenge_id": challenge, "code": "00000-00000-00000-00000-00000-0"}}
        codes = [(await dongle.call("mcp_aql_create", attempt)).code for _ in range(11)]
        assert codes[-1] == "RATE_LIMIT_EXCEEDED", codes
        locked = await dongle.call("mcp_aql_create", attempt)
        details = locked.details
        assert (details["limit"], details["window"], details["remaining"]) == (10, "minute", 0), details
        assert 0 < details["retry_after_seconds"] <= 60
        assert abs(seconds_until(details["resets_at"]) - details["retry_after_seconds"]) < 30
        assert "retry_after_secs" not in details, "the old name is gone"


def test_the_checker_refuses_the_shapes_the_audit_found() -> None:
    documented = {field.name: field.required for field in error_table()["TOKEN_SCOPE_MISMATCH"]}
    assert documented == {"token": True, "token_operation": True, "requested_operation": True}

    def failure(code: str, details: dict) -> dict:
        return {"success": False, "error": {"code": code, "message": "m", "details": details}}

    old_shapes = [
        failure("RATE_LIMIT_EXCEEDED", {"agent": "a", "retry_after_secs": 5}),
        failure("NOT_FOUND_RESOURCE", {"http_status": "404"}),
        failure("TOKEN_INVALID", {"id": "conf_x"}),
        failure("TOKEN_EXPIRED", {"token": "conf_x"}),
        failure("TOKEN_SCOPE_MISMATCH", {"token": "conf_x"}),
        failure("RATE_LIMIT_QUOTA_EXHAUSTED", {"metric": "m", "current": 3, "limit": 3}),
        failure("VALIDATION_PAYLOAD_TOO_LARGE", {"adapter": "a", "limit_bytes": 10}),
        failure("TOKEN_EXPIRED", {"token": "t", "expired_at": 1700000000000, "current_time": "2026-01-28T12:07:30Z"}),
        {"success": True, "data": None, "warnings": [{"code": "RATE_LIMIT_QUOTA_WARNING", "message": "m", "details": {"metric": "m"}}]},
        {"success": True, "data": None, "halted_at": {"index": 0, "result": failure("TOKEN_ALREADY_USED", {})}},
    ]
    for shape in old_shapes:
        assert envelope_problems(shape), f"accepted {shape}"
    assert envelope_problems(failure("TOKEN_INVALID", {"token": "conf_x", "extra": 1})) == []
    assert envelope_problems(failure("VALIDATION_INVALID_TYPE", {"http_status": 422})) == [], "a status cannot name the parameter (6.2)"
    assert envelope_problems(failure("TRANSPORT_TIMEOUT", {})) == [], "codes the spec does not detail pass"
