"""The loop instructions where clients look for them: the initialize
result's `instructions`, and the `safety_loop` prompt with the protocol."""

from __future__ import annotations

import pytest
from mcp import MCPError

from dongle_client import serve

pytestmark = pytest.mark.anyio


async def test_initialize_carries_short_loop_instructions() -> None:
    async with serve() as dongle:
        instructions = dongle.initialize_result.instructions
        assert instructions and len(instructions) < 600, instructions
        for must in ("record_execution_step", "execute_agent", "continue", "safety_loop"):
            assert must in instructions


async def test_the_safety_loop_prompt_is_listed_and_served() -> None:
    async with serve() as dongle:
        listed = await dongle.session.list_prompts()
        assert [p.name for p in listed.prompts] == ["safety_loop"]
        prompt = await dongle.session.get_prompt("safety_loop")
        assert len(prompt.messages) == 1 and prompt.messages[0].role == "user"
        text = prompt.messages[0].content.text
        for must in ("execute_agent", "record_execution_step", "nextActionHint", "confirm_operation", "verify_challenge", "complete_execution", "Never guess a code"):
            assert must in text, must
        with pytest.raises(MCPError):
            await dongle.session.get_prompt("no_such_prompt")
