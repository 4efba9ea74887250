#!/usr/bin/env python3
"""The policy corpus (tests/corpus/commands.toml) through safety-dongle's
Claude Code hook and through dcg (destructive_command_guard, crates.io),
side by side: each row is sent to each guard as the PreToolUse payload
Claude Code would send, one process per row, as a real hook runs.

Prints, per guard: dangerous rows caught (denied, or sent to a human),
hard-denied (no human can let it through), ordinary rows flagged, and the
median and p99 milliseconds from spawn to answer.

Run with `bash benches/versus-dcg.sh` (builds both release binaries), or
`python3 benches/versus-dcg.py --dongle BIN --dcg BIN [--dcg-config FILE]
[--ordinary-only]`.
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import tomllib

from hookbench import hook

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOME = "/home/dev"
PROJECT = "/home/dev/project"


def rows():
    corpus = tomllib.loads((ROOT / "tests/corpus/commands.toml").read_text())
    for group in corpus["dangerous"]:
        for command in group["commands"]:
            yield True, group["category"], command
    for group in corpus["ordinary"]:
        for command in group["commands"]:
            yield False, group["kind"], command


def payload(index, row):
    """The tool call a row stands for, as tests/it/corpus.rs maps it."""

    def tool(name, tool_input):
        return hook.payload(f"corpus-{index}", PROJECT, name, tool_input)

    head, _, rest = row.partition(" ")
    if head == "read_file":
        return tool("Read", {"file_path": rest})
    if head == "write_file":
        return tool("Write", {"file_path": rest, "content": "x"})
    if head in ("search_files", "list_files"):
        pattern, _, path = rest.partition(" ")
        return tool("Grep" if head == "search_files" else "Glob", {"pattern": pattern, "path": path or "."})
    if head == "web_search":
        return tool("WebSearch", {"query": rest})
    if row.startswith("https://") and " " not in row:
        return tool("WebFetch", {"url": row, "prompt": "read"})
    if "__" in head:
        try:
            arguments = json.loads(rest)
            if isinstance(arguments, dict):
                return tool(f"mcp__{head}", arguments)
        except json.JSONDecodeError:
            pass
    return tool("Bash", {"command": row})


class Tally:
    def __init__(self, name):
        self.name, self.caught, self.hard, self.flagged, self.ms = name, 0, 0, 0, []
        self.dangerous = self.ordinary = 0

    def add(self, dangerous, decision, hard, ms):
        self.ms.append(ms)
        if dangerous:
            self.dangerous += 1
            self.caught += decision.holds
            self.hard += hard
        else:
            self.ordinary += 1
            self.flagged += decision.holds

    def line(self):
        pct = lambda n, d: f"{n:>5} ({100 * n / d:5.1f}%)" if d else "-"
        ms = sorted(self.ms)
        p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
        return f"| {self.name} | {pct(self.caught, self.dangerous)} | {pct(self.hard, self.dangerous)} | {pct(self.flagged, self.ordinary)} | {statistics.median(ms):.2f} | {p99:.2f} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dongle", required=True, help="safety-dongle release binary")
    parser.add_argument("--dcg", required=True, help="dcg binary")
    parser.add_argument("--dcg-config", help="dcg config file (default: dcg's own defaults)")
    parser.add_argument("--misses", type=int, default=0, help="print this many rows each guard got wrong")
    parser.add_argument("--ordinary-only", action="store_true", help="only the ordinary rows (latency of everyday work)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        dongle_hook = hook.DongleHook(args.dongle, scratch)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": HOME}
        dcg_env = dict(env, HOME=str(scratch / "dcg-home"))
        if args.dcg_config:
            dcg_env["DCG_CONFIG"] = args.dcg_config
        dongle = Tally("safety-dongle (default policy)")
        dcg = Tally("dcg" + (f" ({pathlib.Path(args.dcg_config).name})" if args.dcg_config else " (defaults)"))
        wrong = {dongle.name: [], dcg.name: []}
        for index, (dangerous, label, row) in enumerate(rows()):
            if args.ordinary_only and dangerous:
                continue
            body = json.dumps(payload(index, row)).encode()
            answer = hook.ask(dongle_hook.argv(f"corpus-{index}"), env, None, body)
            dongle.add(dangerous, answer.decision, answer.decision is hook.Decision.DENY and "hard-blocked" in answer.reason, answer.milliseconds)
            if answer.decision.holds != dangerous:
                wrong[dongle.name].append(f"[{label}] {row!r}")
            answer = hook.ask([args.dcg], dcg_env, None, body)
            dcg.add(dangerous, answer.decision, answer.decision is hook.Decision.DENY, answer.milliseconds)
            if answer.decision.holds != dangerous:
                wrong[dcg.name].append(f"[{label}] {row!r}")
        print(f"corpus: {dongle.dangerous} dangerous rows, {dongle.ordinary} ordinary rows, one hook process per row\n")
        print("| guard | dangerous caught | hard-denied | ordinary flagged | median ms | p99 ms |")
        print("|---|---|---|---|---|---|")
        print(dongle.line())
        print(dcg.line())
        for name, rows_wrong in wrong.items():
            for row in rows_wrong[: args.misses]:
                print(f"{name} wrong: {row}", file=sys.stderr)


if __name__ == "__main__":
    main()
