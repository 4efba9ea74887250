"""Waiting for a human through the official MCP Python SDK.

`confirm_operation` tells a client that asked for progress, while it
waits, that a human is being asked (notifications/progress,
mcp-integration.md 5.1), within a wait that stays under the 60 s after
which common clients give up; when the human has not answered by then it
says so, recoverably, with the request to repeat. The human is a script on
the verifier's `command` channel that answers only once the test lets it
(a gate file), so nothing asserted depends on the machine's speed.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from mcp.types import ProgressNotification

from dongle_client import BIN, Dongle, serve

pytestmark = pytest.mark.anyio

# The longest one MCP request waits for a human (below 60 s).
CLIENT_WAIT_LIMIT_SECS = 50


class Human:
    """A dongle config whose verifier asks a scripted human, and that human."""

    def __init__(self, approval_timeout_secs: int | None = None):
        verifier = BIN.with_name("safety-dongle-verifier")
        assert verifier.is_file() and os.access(verifier, os.X_OK), f"{verifier} is missing: cargo build --workspace"
        self.dir = Path(tempfile.mkdtemp(prefix="dongle-human-"))
        self.gate = self.dir / "answer-now"
        script = self.dir / "human.sh"
        # Reads the request as a person reads the dialog, then approves once
        # let; bounded, so a failed test leaves no script waiting for long.
        script.write_text(
            "#!/bin/sh\ncat > /dev/null\ni=0\n"
            f"while [ ! -e '{self.gate}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
            "echo approve\n"
        )
        lines = [
            "[verifier]",
            f"program = {json.dumps(str(verifier))}",
            'channels = ["command"]',
            f"command = [\"/bin/sh\", {json.dumps(str(script))}]",
        ]
        if approval_timeout_secs is not None:
            lines.append(f"approval_timeout_secs = {approval_timeout_secs}")
        self.config = self.dir / "config.toml"
        self.config.write_text("\n".join(lines) + "\n")

    def let_answer(self) -> None:
        self.gate.touch()

    def serve(self, **kwargs):
        return serve(args=["serve", "--config", str(self.config)], **kwargs)


def confirm(approval_id: str) -> dict:
    return {"operation": "confirm_operation", "params": {"approval_id": approval_id}}


async def paused_for_approval(dongle: Dongle, agent: str) -> str:
    started = await dongle.call("mcp_aql_execute", {"operation": "execute_agent", "params": {"element_name": agent}})
    assert started.data["status"] == "running"
    step = await dongle.call(
        "mcp_aql_create",
        {"operation": "record_execution_step", "params": {"element_name": agent, "nextActionHint": "git push origin main"}},
    )
    assert step.data["continue"] is False
    pauses = [n for n in step.data["notifications"] if n["type"] == "autonomy_pause"]
    return pauses[-1]["metadata"]["approvalId"]


async def test_confirm_operation_reports_progress_until_the_human_answers() -> None:
    human = Human()
    async with human.serve() as dongle:
        approval = await paused_for_approval(dongle, "pusher")
        reports: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            reports.append((value, total, message))
            # The human answers only once the client heard that it waits.
            human.let_answer()

        answered = await dongle.call("mcp_aql_execute", confirm(approval), progress=progress)
        assert answered.data == {"approved": True, "approval_id": approval, "element_name": "pusher", "redelivered": False}
        assert reports, "a client that asked for progress hears that a human is being waited for"
        values = [value for value, _, _ in reports]
        assert values == sorted(set(values)), f"progress increases: {values}"
        for _, total, message in reports:
            assert total is not None and 0 < total <= CLIENT_WAIT_LIMIT_SECS, (
                f"one request waits below the clients' 60 s, not approval_timeout_secs (120): {total}"
            )
            assert message and "Waiting for a human" in message and approval in message, message


async def test_a_wait_that_ends_unanswered_says_to_ask_again_and_no_progress_goes_unasked() -> None:
    human = Human(approval_timeout_secs=1)
    progress_seen: list[ProgressNotification] = []

    async def watch(message) -> None:
        if isinstance(message, ProgressNotification):
            progress_seen.append(message)

    async with human.serve(message_handler=watch) as dongle:
        approval = await paused_for_approval(dongle, "pusher")
        pending = await dongle.call("mcp_aql_execute", confirm(approval))
        assert pending.code == "CONFIRMATION_REQUIRED" and pending.is_error is False, "recoverable: ask again"
        assert pending.details["approval_id"] == approval and pending.details["status"] == "pending"
        assert pending.details["retry"] == confirm(approval), pending.details
        assert "confirm_operation" in pending.error["message"] and approval in pending.error["message"]
        assert progress_seen == [], "no progress token, no progress"

        # The request stayed open: asking again, as the answer says, hears
        # the human.
        human.let_answer()
        answered = await dongle.call("mcp_aql_execute", pending.details["retry"])
        assert answered.data["approved"] is True and answered.data["approval_id"] == approval
        # Whether the client heard it the server cannot always know: the
        # session may hear it once more, as the same single use.
        again = await dongle.call("mcp_aql_execute", confirm(approval))
        assert again.data == {**answered.data, "redelivered": True}
        used = await dongle.call("mcp_aql_execute", confirm(approval))
        assert used.code == "TOKEN_ALREADY_USED", "once more, not twice"
