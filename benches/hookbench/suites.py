"""The peers' labelled suites (../shared/peer-suites/*.jsonl, described in
its README): their rows, the payload a row is sent as, and a guard's
answers scored against the labels, firm and debatable rows apart.
"""

import json
import pathlib
import statistics
import subprocess

from .hook import payload

NAMES = ("dcg", "ccsn", "holguard")


def rows(folder, suite):
    text = (pathlib.Path(folder) / f"{suite}.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def scratch_project(home):
    """A git project under `home`: some labels depend on the working
    directory being a project (cc-safety-net allows `rm -rf build` inside
    one and blocks it outside)."""
    project = pathlib.Path(home) / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def row_payload(row, project):
    tool_input = {"command": row["command"]} if "command" in row else row.get("input", {})
    return payload(f"peer-{row['id']}", project, row["tool"], tool_input)


def dangerous(row):
    return row["label"] != "allow"


def right(row, decision):
    """A deny or ask row is caught by any answer but silence; an allow row
    is right only when the guard is silent."""
    return decision.holds == dangerous(row)


def percent(held, total):
    return f"{held}/{total} ({100 * held / total:.1f}%)" if total else "-"


class Score:
    """One guard's answers on one suite: held rows among firm deny+ask,
    firm allow, debatable deny+ask and debatable allow rows, and the
    milliseconds per row."""

    def __init__(self):
        self.counts = {(firm, danger): [0, 0] for firm in (True, False) for danger in (True, False)}
        self.ms = []

    def add(self, row, answer):
        count = self.counts[(not row.get("debatable"), dangerous(row))]
        count[0] += answer.decision.holds
        count[1] += 1
        if answer.milliseconds is not None:
            self.ms.append(answer.milliseconds)

    def held(self, firm, danger):
        """(rows held, rows) of one kind."""
        return tuple(self.counts[(firm, danger)])

    def cells(self):
        """Firm caught, firm flagged, debatable caught, debatable flagged."""
        return [percent(*self.held(firm, danger)) for firm in (True, False) for danger in (True, False)]

    def median_ms(self):
        return f"{statistics.median(self.ms):.1f}" if self.ms else "-"
