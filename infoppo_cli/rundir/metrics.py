"""``metrics.jsonl``: one JSON object per training step; its one writer (:class:`MetricsWriter`) and its
one reader.

Schema: every line is one JSON object with an integer ``step`` (the training step, counted from 1) and
numbers only otherwise: the per-step diagnostics under the names listed in
``infoppo_cli.openrlhf_adapter.metrics_log.STEP_METRICS`` (``reward_mean``, ``rho_mean``,
``info_discount_mean``, ``clip_upper_mean``, ...), any other numeric entry of OpenRLHF's per-step status
under its own name, and on steps with in-training evaluation ``eval_<bench>`` (Mean@k accuracy in
percent), ``eval_<bench>_reward_mean`` (the mean reward; runs before it logged OpenRLHF's name,
``eval_<bench>_pass1``) and ``eval_<bench>_pass_at_<k>_pct`` (pass@k in percent). A metric that is not
finite is data (a diverged run) and is kept: standard JSON has no NaN, so it is written as the string
``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (:func:`metrics_line`); readers also take the bare
``NaN``/``Infinity`` that Python's ``json`` writes by default, and ``null``, as not finite
(:func:`metric_number`). The trainer appends the lines to an append-only log
(:mod:`infoppo_cli.records.jsonl`: fsynced, one torn-line policy). A step's line and its eval's may be
two lines, merged field by field (the later wins). A resumed run first writes ``{"step": k,
"resumed_at_step": k}`` (:data:`RESUMED_AT`), k the step of the checkpoint it goes on from (0: from the
start): the earlier lines of steps after k are of weights the run no longer has, and the reader drops
them, so every step read is of the weights that went on. A torn last line (a crash mid-write) or a
damaged line is skipped and counted; so is a line with a value outside the schema (a negative
``step``, a metric that is text or a list), never read as a step, with why; a line without ``step``
takes its line number as the step (and is counted, so a reader can say so)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from infoppo_cli.records import JsonlLog, iter_jsonl

_NON_FINITE_NAMES = {math.inf: "Infinity", -math.inf: "-Infinity"}
RESUMED_AT = "resumed_at_step"
"""The key of a resumed run's first line (see the module)."""


def _encoded(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else _NON_FINITE_NAMES[value]
    return value


def metrics_line(record: dict[str, Any]) -> str:
    """One step's line (without its newline): standard JSON, a non-finite value written as text."""
    return json.dumps({key: _encoded(value) for key, value in record.items()}, allow_nan=False)


class MetricsWriter:
    """The one writer of a ``metrics.jsonl``: appends step records, each as :func:`metrics_line`, to the
    append-only log (``records.jsonl``'s torn-line policy: fsynced, a torn last line cut off first)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._log = JsonlLog(path, "metrics line")

    def append(self, record: Mapping[str, Any]) -> None:
        self._log.append([metrics_line(dict(record))])

    def mark_resumed(self, step: int) -> None:
        """A resumed run goes on from its checkpoint of ``step``: earlier lines after it are superseded."""
        self.append({"step": int(step), RESUMED_AT: int(step)})


@dataclass
class MetricsLog:
    """A parsed ``metrics.jsonl``: one record per step, sorted by step (see the module's schema)."""

    records: list[dict[str, Any]]
    malformed_lines: list[int] = field(default_factory=list)
    """Line numbers that are not JSON objects (a torn last line after a crash, for one)."""
    stepless_lines: list[int] = field(default_factory=list)
    """Line numbers without an integer ``step``: their line number was used as the step."""
    invalid_lines: list[tuple[int, str]] = field(default_factory=list)
    """Lines skipped for a value no step has (a negative ``step``, a metric that is not a number), each
    with why (:func:`invalid_value`)."""


def invalid_value(record: Mapping[str, Any]) -> str | None:
    """Why a step record cannot be plotted (``step -5 is negative``, ``reward_mean "high" is not a
    number``), or ``None`` when every value fits the schema (see the module)."""
    step = record.get("step")
    if isinstance(step, int) and not isinstance(step, bool) and step < 0:
        return f"step {step} is negative"
    resumed = record.get(RESUMED_AT)
    if RESUMED_AT in record and (isinstance(resumed, bool) or not isinstance(resumed, int) or resumed < 0):
        return f"{RESUMED_AT} {json.dumps(resumed)[:40]} is not a step"
    for key, value in record.items():
        if key != "step" and metric_number(value) is None:
            shown = json.dumps(value)
            return f"{key} {shown if len(shown) <= 40 else shown[:37] + '...'} is not a number"
    return None


def read_metrics_log(path: str | os.PathLike[str]) -> MetricsLog:
    """Read a ``metrics.jsonl``; for a repeated step, later lines win field by field; a resume drops the
    earlier lines of the steps after its checkpoint's."""
    by_step: dict[int, dict[str, Any]] = {}
    log = MetricsLog(records=[])
    for line in iter_jsonl(path):
        if line.record is None:
            log.malformed_lines.append(line.number)
            continue
        record = line.record
        why = invalid_value(record)
        if why is not None:
            log.invalid_lines.append((line.number, why))
            continue
        step = record.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            log.stepless_lines.append(line.number)
            record = {**record, "step": line.number}
        if RESUMED_AT in record:
            by_step = {step: fields for step, fields in by_step.items() if step <= record[RESUMED_AT]}
            continue
        by_step[record["step"]] = {**by_step.get(record["step"], {}), **record}
    log.records = [by_step[step] for step in sorted(by_step)]
    return log


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The step records of a ``metrics.jsonl`` (see :func:`read_metrics_log`)."""
    return read_metrics_log(path).records


def metric_series(records: Iterable[Mapping[str, Any]], key: str) -> list[tuple[Any, float]]:
    """(step, value) of each record that logged ``key``, in step order; non-finite values kept, values
    that are not metrics (:func:`metric_number`) left out."""
    pairs = []
    for record in records:
        value = metric_number(record[key]) if key in record else None
        if value is not None:
            pairs.append((record["step"], value))
    return sorted(pairs, key=lambda pair: pair[0])


_NON_FINITE_TEXT = {
    "nan": math.nan,
    "infinity": math.inf,
    "inf": math.inf,
    "-infinity": -math.inf,
    "-inf": -math.inf,
}


def metric_number(value: Any) -> float | None:
    """A metric's value as a float, non-finite ones included: a JSON number (``NaN``/``Infinity`` as
    Python's ``json`` reads them), one of the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (any
    case; ``"inf"`` too), or ``null`` (a value that was not a number: NaN). ``None`` for anything else
    (a bool, other text, a list), which is not a metric."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # an integer beyond float's range
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        return _NON_FINITE_TEXT.get(value.strip().lower().lstrip("+"))
    return None
