"""A guard as Claude Code runs it: one process per tool call, the
PreToolUse payload on stdin, and the answer read the way Claude Code reads
it. A deny (JSON `permissionDecision: deny`, or exit code 2) or an ask
holds the call; anything else, an explicit allow included, lets it run.
"""

import dataclasses
import enum
import json
import pathlib
import subprocess
import time


class Decision(enum.Enum):
    DENY = "deny"
    ASK = "ask"
    PASS = "pass"

    @property
    def holds(self):
        """The call waits for, or is refused by, something other than the agent."""
        return self is not Decision.PASS


@dataclasses.dataclass(frozen=True)
class Answer:
    decision: Decision
    reason: str
    milliseconds: float | None
    """None when the hook did not run (its matcher skips the tool)."""


def payload(session, cwd, tool_name, tool_input):
    """The PreToolUse payload Claude Code sends for one tool call."""
    return {
        "session_id": session,
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
    }


def ask(argv, env, cwd, body, timeout=120):
    """Runs the hook once with `body` (bytes) on stdin and reads its answer.
    A hook that outlives `timeout` seconds is killed and the call runs, as
    Claude Code does with a hook past its timeout."""
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, input=body, capture_output=True, env=env, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Answer(Decision.PASS, f"no answer in {timeout} s", (time.perf_counter() - started) * 1000)
    elapsed = (time.perf_counter() - started) * 1000
    text = done.stdout.decode(errors="replace").strip()
    try:
        answer = json.loads(text) if text else {}
    except json.JSONDecodeError:
        answer = {}
    specific = answer.get("hookSpecificOutput", {}) if isinstance(answer, dict) else {}
    specific = specific if isinstance(specific, dict) else {}
    decision = specific.get("permissionDecision")
    reason = specific.get("permissionDecisionReason", "") or done.stderr.decode(errors="replace")[:300]
    if decision == "deny" or done.returncode == 2:
        return Answer(Decision.DENY, reason, elapsed)
    if decision == "ask":
        return Answer(Decision.ASK, reason, elapsed)
    return Answer(Decision.PASS, reason, elapsed)


class DongleHook:
    """safety-dongle's `hook claude-code` with its default policy, its state
    under `scratch`, and no verifier: a pause is answered at once, with deny."""

    def __init__(self, binary, scratch):
        self.binary = str(pathlib.Path(binary).resolve())
        self.config = pathlib.Path(scratch) / "config.toml"
        self.config.write_text(f'data_dir = "{pathlib.Path(scratch) / "state"}"\n[verifier]\nprogram = "/nonexistent/verifier"\n')
        self.config.chmod(0o600)

    def argv(self, agent):
        """One agent per call, so no call inherits another's block."""
        return [self.binary, "hook", "claude-code", "--config", str(self.config), "--agent", agent]
