#!/usr/bin/env python3
"""Every guard on every peer suite (../shared/peer-suites/*.jsonl), from one
run: safety-dongle with its default policy, dcg with its defaults and with
every pack, cc-safety-net in its default mode and HOL Guard as it installs
itself. Each guard runs as Claude Code runs a PreToolUse hook: one process
per row, the row's payload on stdin, from a scratch git project under a
scratch home of the guard's own, and only for the tools its matcher names.

Every guard is scored the same way, against each suite's labels (no row set
apart): a deny or ask row is caught when the guard answers anything but
silence (deny, ask, or exit code 2); an allow row is flagged when it
answers. Firm and debatable rows are reported apart. Prints a markdown
table; progress goes to stderr.

Run with `bash benches/peer-guards.sh`, which installs the peers into a
temporary folder, or directly:

    python3 benches/peer-guards.py --dongle BIN [--dcg BIN --dcg-all-packs FILE]
        [--ccsn JS] [--hol-guard BIN] [--unavailable 'GUARD: why']... [--json FILE]
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from hookbench import hook, suites

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOL_GUARD_READY_WITHIN = 180
ROUTINE = "git status"


class Unavailable(Exception):
    """The guard cannot run here; the message says why."""


class Guard:
    """A guard installed as a Claude Code PreToolUse hook under its own home."""

    name = ""
    timeout = 60
    """Seconds Claude Code waits for the hook (its default, unless the guard's own settings say)."""

    def start(self, home, project):
        """Sets the guard up under `home`; raises Unavailable when it cannot."""
        self.home, self.project = home, project
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "USER": "dev", "LANG": "C.UTF-8"}

    matcher = ""
    """The tools Claude Code runs the hook for, as its settings name them."""

    def runs_for(self, tool):
        return self.matcher in ("", "*") or re.fullmatch(self.matcher, tool) is not None

    def argv(self, row):
        """The hook command for a row."""
        raise NotImplementedError

    def stop(self):
        """Ends whatever the guard left running."""


class Dongle(Guard):
    def __init__(self, binary):
        self.name, self.binary = "safety-dongle, default policy", binary

    def start(self, home, project):
        super().start(home, project)
        self.hook = hook.DongleHook(self.binary, home.parent)

    def argv(self, row):
        return self.hook.argv(f"peer-{row['id']}")


class Command(Guard):
    """A guard whose hook is one fixed command."""

    def __init__(self, name, argv, matcher="", env=None):
        self.name, self.command, self.matcher, self.extra_env = name, argv, matcher, env or {}

    def start(self, home, project):
        super().start(home, project)
        self.env.update(self.extra_env)

    def argv(self, row):
        return self.command


class HolGuard(Guard):
    """HOL Guard installs itself into ~/.claude/settings.json and answers
    through a local daemon it starts on first use; the hook it installs is
    run as written there, once the daemon answers a routine command."""

    name = "HOL Guard, default"

    def __init__(self, binary):
        self.binary = str(pathlib.Path(binary).resolve())
        self.runtime = None

    def start(self, home, project):
        super().start(home, project)
        installed = subprocess.run(
            [self.binary, "install", "claude-code", "--workspace", str(project), "--json"],
            env=self.env, cwd=project, capture_output=True, stdin=subprocess.DEVNULL, timeout=300,
        )
        if installed.returncode != 0:
            raise Unavailable(f"`hol-guard install claude-code` exited {installed.returncode}: {tail(installed.stderr or installed.stdout)}")
        settings = json.loads((home / ".claude/settings.json").read_text())
        entries = [
            (entry.get("matcher") or "", [item["command"], *item.get("args", [])], item.get("timeout", 60))
            for entry in settings.get("hooks", {}).get("PreToolUse", [])
            for item in entry.get("hooks", [])
            if item.get("type") == "command"
        ]
        if len(entries) != 1:
            raise Unavailable(f"expected one PreToolUse command hook in ~/.claude/settings.json, found {len(entries)}")
        self.matcher, self.command, self.timeout = entries[0]
        self.runtime = self.command[0]
        # The first calls start the daemon and are denied until it answers.
        body = json.dumps(hook.payload("peer-warm-up", project, "Bash", {"command": ROUTINE})).encode()
        deadline = time.monotonic() + HOL_GUARD_READY_WITHIN
        while True:
            answer = hook.ask(self.command, self.env, project, body, timeout=self.timeout)
            if not answer.decision.holds:
                return
            if time.monotonic() > deadline:
                raise Unavailable(f"its daemon did not come up within {HOL_GUARD_READY_WITHIN} s; `{ROUTINE}` still answered {answer.decision.value}: {answer.reason[:200]!r}")
            time.sleep(2)

    def argv(self, row):
        return self.command

    def stop(self):
        guard_home = self.home / ".hol-guard"
        quiet = {"env": self.env, "capture_output": True, "stdin": subprocess.DEVNULL, "timeout": 60}
        subprocess.run([self.binary, "daemon", "stop", "--guard-home", str(guard_home), "--json"], **quiet)
        if self.runtime:
            subprocess.run([self.runtime, "resident-stop", "--state-dir", str(guard_home / "native-runtime")], **quiet)
        end_processes_under(self.home)


def end_processes_under(folder):
    """SIGTERM, by pid, each process still running whose command line names
    `folder`: what a guard started there and did not stop itself."""
    mark = str(folder).encode()
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if mark in (entry / "cmdline").read_bytes():
                    os.kill(int(entry.name), signal.SIGTERM)
            except (OSError, ProcessLookupError):
                pass


def tail(output):
    lines = output.decode(errors="replace").strip().splitlines()
    return lines[-1][:300] if lines else "(no output)"


def version(argv):
    try:
        done = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
        return tail(done.stdout or done.stderr)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({error})"


def commit():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return (head or "unknown") + (" with uncommitted changes" if dirty else "")


def guards(args):
    """(guards to run, versions to print) from the command line."""
    chosen = [Dongle(args.dongle)]
    versions = [f"safety-dongle: {version([args.dongle, '--version'])}"]
    if args.dcg:
        # The matcher `dcg install` writes for Claude Code (its CLAUDE_SHELL_MATCHER).
        shell = "Bash|PowerShell|Monitor"
        chosen.append(Command("dcg, defaults", [args.dcg], shell))
        chosen.append(Command("dcg, every pack", [args.dcg], shell, {"DCG_CONFIG": str(pathlib.Path(args.dcg_all_packs).resolve())}))
        versions.append(f"dcg: {version([args.dcg, '--version'])}")
    if args.ccsn:
        node = shutil.which("node") or "node"
        # The hook its Claude Code plugin declares (hooks/hooks.json: every tool).
        chosen.append(Command("cc-safety-net, default mode", [node, str(pathlib.Path(args.ccsn).resolve()), "hook", "--coding-cli"]))
        versions.append(f"cc-safety-net: {version([node, args.ccsn, '--version'])}")
    if args.hol_guard:
        chosen.append(HolGuard(args.hol_guard))
        versions.append(f"HOL Guard: {version([args.hol_guard, '--version'])}")
    return chosen, versions


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dongle", required=True, help="safety-dongle binary")
    parser.add_argument("--dcg", help="dcg binary")
    parser.add_argument("--dcg-all-packs", help="dcg config enabling every pack (benches/build-dcg.sh writes it)")
    parser.add_argument("--ccsn", help="cc-safety-net's dist/bin/cc-safety-net.js")
    parser.add_argument("--hol-guard", help="hol-guard command of a virtualenv holding HOL Guard")
    parser.add_argument("--unavailable", action="append", default=[], help="'GUARD: why' for a guard that could not be installed")
    parser.add_argument("--suites", default=str(ROOT.parent / "shared/peer-suites"), help="folder of the peer suites")
    parser.add_argument("--jobs", type=int, default=2, help="rows judged at once")
    parser.add_argument("--json", help="write every guard's answer to every row here")
    args = parser.parse_args()
    if args.dcg and not args.dcg_all_packs:
        parser.error("--dcg needs --dcg-all-packs")

    chosen, versions = guards(args)
    rows = {suite: suites.rows(args.suites, suite) for suite in suites.NAMES}
    scores, answers = {}, {}
    not_run = [tuple(part.strip() for part in line.split(":", 1)) for line in args.unavailable]
    with tempfile.TemporaryDirectory() as scratch:
        for index, guard in enumerate(chosen):
            home = pathlib.Path(scratch) / f"guard-{index}" / "home" / "dev"
            project = suites.scratch_project(home)
            started = time.monotonic()
            try:
                guard.start(home, project)
                for suite, suite_rows in rows.items():
                    scores[(suite, guard.name)], answers[(suite, guard.name)] = judge_all(guard, suite_rows, project, args.jobs)
                    print(f"{guard.name}: {suite} done at {time.monotonic() - started:.0f} s", file=sys.stderr)
            except Unavailable as why:
                not_run.append((guard.name, str(why)))
                print(f"{guard.name}: not run: {why}", file=sys.stderr)
            finally:
                guard.stop()

    print(f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} at commit {commit()}. Versions: " + "; ".join(versions) + ".")
    print()
    print("| suite | guard | firm deny+ask caught | firm allow flagged | debatable deny+ask caught | debatable allow flagged | median ms |")
    print("|---|---|---|---|---|---|---|")
    for suite in suites.NAMES:
        for guard in chosen:
            score = scores.get((suite, guard.name))
            if score:
                print(f"| {suite} | {guard.name} | " + " | ".join(score.cells()) + f" | {score.median_ms()} |")
    for name, why in not_run:
        print(f"\nNot run: {name}: {why}")
    if args.json:
        dump = {f"{guard} on {suite}": decisions for (suite, guard), decisions in answers.items()}
        pathlib.Path(args.json).write_text(json.dumps(dump, indent=1))


def judge_all(guard, rows, project, jobs):
    """(Score, {row id: decision}) of one guard on one suite."""

    def judge(row):
        if not guard.runs_for(row["tool"]):
            return row, hook.Answer(hook.Decision.PASS, f"the hook's matcher skips {row['tool']}", None)
        return row, hook.ask(guard.argv(row), guard.env, project, json.dumps(suites.row_payload(row, project)).encode(), timeout=guard.timeout)

    score = suites.Score()
    decisions = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for row, answer in pool.map(judge, rows):
            score.add(row, answer)
            decisions[row["id"]] = answer.decision.value
    return score, decisions


if __name__ == "__main__":
    main()
