"""The `details` each error and warning code carries, as the spec documents them.

Read at test time from `<repo>/../shared/spec/docs/error-codes.md` (errors)
and `features/warnings.md` (warnings), never copied into the repository.
Each code's `**Details:**` block is a TypeScript object type: a field
without `?` is required, and every documented field that is present must
have its documented type. Fields the spec does not document are allowed
(its `details` is `Record<string, unknown>`), and so are codes it does not
document. A documented string named `*_at` or `*_time` must be an RFC 3339
time. One gap is the spec's own: a `VALIDATION_*` error mapped from an
upstream's HTTP 400 or 422 (it carries `http_status`) cannot name the
parameter (`error-codes.md` 6.2), so its required fields are not required;
what it carries is still type-checked.

`dongle_client.check_envelope` runs `envelope_problems` on every envelope
the suite receives; `tests/it/spec_details.rs` reads the same blocks the
same way for the Rust integration tests.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

DOCS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "docs"

_CODE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
_FIELD = re.compile(r"^(\w+)(\??):\s*(.+);$")


@dataclass(frozen=True)
class Field:
    name: str
    required: bool
    type: str


def _check_type(text: str) -> str:
    if text in {"string", "number", "boolean", "string[]", "unknown"} or text.startswith("Record<") or text.startswith("'"):
        return text
    raise ValueError(f"the spec documents a details type this checker cannot read: {text}")


def read_table(markdown: str) -> dict[str, list[Field]]:
    """Every code's `**Details:**` block in one document."""
    table: dict[str, list[Field]] = {}
    code: str | None = None
    expecting = False
    fields: list[Field] | None = None
    for line in markdown.splitlines():
        stripped = line.strip()
        if fields is not None:
            if stripped.startswith("```"):
                assert code is not None, "a details block under a code's heading"
                table[code] = fields
                fields, expecting = None, False
            elif match := _FIELD.match(stripped):
                name, optional, type_text = match.groups()
                fields.append(Field(name, optional != "?", _check_type(type_text.strip())))
        elif stripped.startswith("#"):
            last = stripped.rsplit(" ", 1)[-1].strip("`")
            code = last if _CODE.match(last) else None
            expecting = False
        elif stripped == "**Details:**" and code is not None:
            expecting = True
        elif expecting and stripped.startswith("```typescript"):
            fields = []
    return table


@functools.cache
def error_table() -> dict[str, list[Field]]:
    return read_table((DOCS_DIR / "error-codes.md").read_text(encoding="utf-8"))


@functools.cache
def warning_table() -> dict[str, list[Field]]:
    return read_table((DOCS_DIR / "features" / "warnings.md").read_text(encoding="utf-8"))


def _is_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in text


def _fits(field: Field, value: Any) -> bool:
    kind = field.type
    if kind == "string":
        timed = field.name.endswith("_at") or field.name.endswith("_time")
        return isinstance(value, str) and (not timed or _is_time(value))
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string[]":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind.startswith("Record<"):
        return isinstance(value, dict)
    if kind.startswith("'"):
        return value in {option.strip().strip("'") for option in kind.split("|")}
    return True  # unknown


def problems(table: dict[str, list[Field]], code: str, details: Any) -> list[str]:
    """What is wrong with `details` for `code`, by the documented fields."""
    fields = table.get(code)
    if fields is None:
        return []
    if details is None:
        details = {}
    if not isinstance(details, dict):
        return [f"{code}: details is not an object"]
    mapped_from_status = code.startswith("VALIDATION_") and "http_status" in details
    found = []
    for field in fields:
        if field.name not in details:
            if field.required and not mapped_from_status:
                found.append(f"{code}: documented field '{field.name}' is missing")
        elif not _fits(field, details[field.name]):
            found.append(f"{code}: field '{field.name}' is {details[field.name]!r}, not the documented {field.type}")
    return found


def envelope_problems(envelope: Any) -> list[str]:
    """Every problem with the documented details of an envelope, its
    warnings, and the results inside a batch answer."""
    if not isinstance(envelope, dict):
        return []
    found = []
    error = envelope.get("error")
    if envelope.get("success") is False and isinstance(error, dict) and isinstance(error.get("code"), str):
        found += problems(error_table(), error["code"], error.get("details"))
    for warning in envelope.get("warnings") or []:
        if isinstance(warning, dict) and isinstance(warning.get("code"), str):
            found += problems(warning_table(), warning["code"], warning.get("details"))
    for item in envelope.get("results") or []:
        if isinstance(item, dict):
            found += envelope_problems(item.get("result"))
    halted = envelope.get("halted_at")
    if isinstance(halted, dict):
        found += envelope_problems(halted.get("result"))
    return found
