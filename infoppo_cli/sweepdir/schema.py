"""The shape of ``sweep.json``, checked field by field when it is read.

A file that was edited by hand, truncated by a full disk or written by something else must stop the sweep
with one line that names the file and the field, before any of it is trusted (a wrong type would
otherwise surface later as a traceback, or as a complaint about options the user never gave).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SWEEP_FILE = "sweep.json"
"""A sweep directory's record (``OUT/sweep.json``)."""
Check = tuple[Callable[[Any], bool], str]
"""A test of a field's value and what it expects, for the message."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, float)


def _is_texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_grid_value(value: Any) -> bool:
    """A value as a sweep records it: a number (gamma, lambda), a name (norm), a pair (clip) or None."""
    if value is None or isinstance(value, str) or _is_number(value):
        return True
    return isinstance(value, list) and all(_is_number(item) for item in value)


def _optional(check: Check) -> Check:
    test, expected = check
    return (lambda value: value is None or test(value)), f"{expected} or null"


TEXT: Check = (lambda value: isinstance(value, str), "a string")
INT: Check = (_is_int, "an integer")
NUMBER: Check = (_is_number, "a number")
TEXTS: Check = (_is_texts, "a list of strings")
TABLE: Check = (lambda value: isinstance(value, dict), "an object")
RECORDS: Check = (lambda value: isinstance(value, list), "a list")

SWEEP_FIELDS: dict[str, Check] = {
    "kind": TEXT,
    "preset": TEXT,
    "sweep_id": TEXT,
    "created": TEXT,
    "updated": TEXT,
    "command": TEXTS,
    "settings": TABLE,
    "versions": TABLE,
    "runs": RECORDS,
}
RUN_FIELDS: dict[str, Check] = {
    "name": TEXT,
    "kind": TEXT,
    "value": (_is_grid_value, "a number, a string or a list of numbers"),
    "value_label": TEXT,
    "time": TEXT,
    "method": TEXT,
    "seed": INT,
    "parameters": TABLE,
    "output_dir": TEXT,
    "phases": RECORDS,
    "status": TEXT,
    "attempts": INT,
    "started": _optional(TEXT),
    "finished": _optional(TEXT),
    "duration_s": _optional(NUMBER),
    "error": _optional(TEXT),
}
RUN_DEFAULTED = ("status", "attempts", "started", "finished", "duration_s", "error")
PHASE_FIELDS: dict[str, Check] = {
    "name": TEXT,
    "command": _optional(TEXTS),
    "request": _optional(TABLE),
    "status": TEXT,
    "exit_code": _optional(INT),
    "started": _optional(TEXT),
    "finished": _optional(TEXT),
    "duration_s": _optional(NUMBER),
    "log": _optional(TEXT),
    "launched": _optional(TEXTS),
    "pid": _optional(INT),
    "ray_job_id": _optional(TEXT),
    "slurm_job_id": _optional(TEXT),
    "note": _optional(TEXT),
}
PHASE_REQUIRED = ("name",)
PHASE_HOLDS = {"train": "request", "eval": "command"}
"""What each phase records: a train phase its request (typed), an eval phase its command."""


def shape_problem(document: Any, schema: int, statuses: tuple[str, ...]) -> str | None:
    """What is wrong with a parsed ``sweep.json`` (the field and why), or None when its shape is right."""
    if not isinstance(document, dict):
        return f"it holds {_kind(document)}, not the object infoppo sweep writes"
    if document.get("schema") == 1 and schema == 2:
        return (
            "it was written by an older infoppo (schema 1: train commands, not requests); finish that "
            "sweep with that version, or run this one in another --out (`infoppo report` still reads it)"
        )
    if document.get("schema") != schema:
        return f"schema must be {schema}, got {document.get('schema')!r}"
    fields = {key: value for key, value in document.items() if key != "schema"}
    problem = _record_problem(fields, "", SWEEP_FIELDS, tuple(SWEEP_FIELDS))
    if problem:
        return problem
    names: set[str] = set()
    for index, run in enumerate(document["runs"]):
        problem = _run_problem(run, f"runs[{index}]", statuses)
        if problem:
            return problem
        if run["name"] in names:
            return f"runs[{index}].name {run['name']!r} is recorded twice"
        names.add(run["name"])
    return None


def _run_problem(run: Any, where: str, statuses: tuple[str, ...]) -> str | None:
    required = tuple(name for name in RUN_FIELDS if name not in RUN_DEFAULTED)
    problem = _record_problem(run, where, RUN_FIELDS, required) or _status_problem(run, where, statuses)
    if problem:
        return problem
    seen: list[str] = []
    for index, phase in enumerate(run["phases"]):
        at = f"{where}.phases[{index}]"
        problem = _record_problem(phase, at, PHASE_FIELDS, PHASE_REQUIRED)
        problem = problem or _status_problem(phase, at, statuses)
        if problem:
            return problem
        if phase["name"] not in PHASE_HOLDS or phase["name"] in seen:
            return f"{at}.name must be one of {', '.join(PHASE_HOLDS)}, once each; got {phase['name']!r}"
        held = PHASE_HOLDS[phase["name"]]
        if not phase.get(held):
            return f"{at}.{held} is missing or empty"
        seen.append(phase["name"])
    if "train" not in seen:
        return f"{where}.phases has no train phase"
    return None


def _record_problem(
    record: Any, where: str, checks: dict[str, Check], required: tuple[str, ...]
) -> str | None:
    if not isinstance(record, dict):
        return f"{where or 'the file'} must be an object, got {_kind(record)}"
    prefix = f"{where}." if where else ""
    missing = [name for name in required if name not in record]
    if missing:
        return f"{prefix}{missing[0]} is missing"
    unknown = sorted(name for name in record if name not in checks)
    if unknown:
        return f"{prefix}{unknown[0]} is not a field infoppo sweep writes"
    for name, value in record.items():
        test, expected = checks[name]
        if not test(value):
            return f"{prefix}{name} must be {expected}, got {_kind(value)}"
    return None


def _status_problem(record: dict[str, Any], where: str, statuses: tuple[str, ...]) -> str | None:
    status = record.get("status", statuses[0])
    if status not in statuses:
        return f"{where}.status must be one of {', '.join(statuses)}, got {status!r}"
    return None


def _kind(value: Any) -> str:
    """A value as a message names it: its JSON type, and the value itself when it is short."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    name = names.get(type(value), "a number")
    if value is None or isinstance(value, (dict, list)):
        return "null" if value is None else name
    shown = repr(value)
    return f"{name} {shown}" if len(shown) <= 40 else name
