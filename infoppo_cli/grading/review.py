"""Re-grading a file of graded samples (``infoppo grade --file``): what changed, and why each case reads so.

The file is JSON Lines with at least ``response`` and ``gold`` on each line, the layout of an
evaluation's ``samples.jsonl`` (``infoppo_cli.eval.sample_store``), whose stored ``correct`` and
``reason`` are kept to show which verdicts the current grader changes. Data only; ``cli/grade.py``
renders it.

What is shown is bounded whatever the response: a collapsed policy can write megabytes on one line, and
its span, the answer found in it, is as long. Text longer than a limit is shown as its beginning and its
end (:func:`cut_text`), with the full length said: :data:`SHOWN_CHARS` in the terminal, and
:data:`JSON_CHARS` in JSON, whose ``cut`` object names each cut field and its length (:func:`bounded`).
Grading always reads the whole response.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.grading.pool import explain_many
from infoppo_cli.grading.verify import REASONS
from infoppo_cli.records import iter_jsonl

ONLY = ("wrong", "correct", "changed", *REASONS[2:])
"""What ``--only`` may select: a verdict's reason, or the cases whose verdict changed."""

SHOWN_CHARS = 2_000
"""The most characters of one text (a span, a gold) printed to the terminal: twice the longest answer the
grader reads (``MAX_ANSWER_CHARS``), so that every answer it parses is shown whole."""

JSON_CHARS = 20_000
"""The most characters of one text written by ``--json``."""


def cut_text(text: str, limit: int) -> str:
    """``text`` when at most ``limit`` characters long, else its first and last ``limit // 2`` characters
    joined by `` … `` (the end of a response is where its answer is)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … {text[len(text) - half :]}"


def bounded(value: Any, limit: int = JSON_CHARS) -> tuple[Any, dict[str, int]]:
    """``value`` (JSON data) with every text longer than ``limit`` cut by :func:`cut_text`, and the full
    length of each cut text by its dotted path (``reading.span``, ``cases.3.gold``)."""
    cut: dict[str, int] = {}

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, str) and len(item) > limit:
            cut[path] = len(item)
            return cut_text(item, limit)
        inner = (
            item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else None
        )
        if inner is None:
            return item
        walked = {key: walk(value, f"{path}.{key}" if path else str(key)) for key, value in inner}
        return walked if isinstance(item, dict) else list(walked.values())

    return walk(value, ""), cut


@dataclass(frozen=True)
class Case:
    """One re-graded sample: where it came from, what was read, and the verdicts before and now.

    ``gold_normalised``, ``span`` and ``source`` are ``None`` when the grading deadline passed (or the
    worker died) before the sample was read.
    """

    where: str
    gold: str
    gold_normalised: str | None
    span: str | None
    source: str | None
    extracted: str | None
    correct: bool
    reason: str
    stored_correct: bool | None = None
    stored_reason: str | None = None

    @property
    def changed(self) -> bool:
        return self.stored_correct is not None and self.stored_correct != self.correct


@dataclass(frozen=True)
class Review:
    """Every case of a file, with counts by reason and the number of verdicts that changed."""

    cases: list[Case]
    reasons: dict[str, int] = field(default_factory=dict)
    changed: int = 0

    def selected(self, only: str | None) -> list[Case]:
        if only is None:
            return self.cases
        if only == "changed":
            return [case for case in self.cases if case.changed]
        return [case for case in self.cases if case.reason == only]

    def to_json(self, only: str | None) -> dict[str, Any]:
        """The review as JSON data, every text bounded (:func:`bounded`); ``cut`` lists what was cut."""
        cases, cut = bounded([asdict(case) for case in self.selected(only)])
        cut = {f"cases.{path}": length for path, length in cut.items()}
        return {
            "total": len(self.cases),
            "reasons": self.reasons,
            "changed": self.changed,
            "cases": cases,
            "cut": cut,
        }


def read_samples(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The lines of a samples file; :class:`UsageError` for a missing file or a line it cannot use."""
    source = Path(path)
    if not source.is_file():
        raise UsageError(f"{source} is not a file")
    rows = []
    for line in iter_jsonl(source):
        if line.record is None:
            raise UsageError(f"{source}:{line.number}: {line.error}")
        missing = [key for key in ("response", "gold") if not isinstance(line.record.get(key), str)]
        if missing:
            raise UsageError(f"{source}:{line.number}: no text field {' or '.join(missing)}")
        rows.append({**line.record, "_line": line.number})
    if not rows:
        raise UsageError(f"{source} holds no samples")
    return rows


def review_samples(
    rows: list[dict[str, Any]],
    workers: int | None = None,
    timeout: float | None = None,
    on_done: Callable[[int], None] | None = None,
) -> Review:
    """Re-grade every row in worker processes: reading and grading alike run under the deadline."""
    pairs = [(row["response"], row["gold"]) for row in rows]
    options = {} if timeout is None else {"timeout": timeout}
    outcomes = explain_many(pairs, workers=workers, on_done=on_done, **options)
    cases = []
    for row, (verdict, reading) in zip(rows, outcomes, strict=True):
        stored = row.get("correct")
        cases.append(
            Case(
                where=_where(row),
                gold=row["gold"],
                gold_normalised=reading.gold_normalised if reading else None,
                span=reading.span if reading else None,
                source=reading.source if reading else None,
                extracted=verdict.extracted,
                correct=verdict.correct,
                reason=verdict.reason,
                stored_correct=stored if isinstance(stored, bool) else None,
                stored_reason=row.get("reason") if isinstance(row.get("reason"), str) else None,
            )
        )
    reasons = dict(Counter(case.reason for case in cases))
    return Review(
        cases, {reason: reasons.get(reason, 0) for reason in REASONS}, sum(c.changed for c in cases)
    )


def _where(row: dict[str, Any]) -> str:
    if {"bench", "id", "sample"} <= row.keys():
        return f"{row['bench']}/{row['id']}#{row['sample']}"
    return f"line {row['_line']}"
