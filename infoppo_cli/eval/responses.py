"""Responses to grade: a responses file (``--responses``) parsed and matched to the benchmark problems,
and graded into sample records with the shared grader."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.sample_store import SampleRecord
from infoppo_cli.records import JsonlLine, iter_jsonl
from infoppo_cli.records.text import valid_text


@dataclass(frozen=True)
class Response:
    """One row of a responses file, matched to its problem."""

    bench: str
    id: str
    sample: int
    response: str
    num_tokens: int | None
    finish_reason: str | None


def _optional_int(row: Mapping[str, Any], name: str) -> int | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return value


def read_responses(path: str | Path, problems: Mapping[str, Sequence[Any]]) -> list[Response]:
    """Parse a responses JSONL file and match each row to a problem of the selected benches.

    Rows: ``id`` and ``response`` (required), ``sample`` (default: the row's position among the
    rows of its id), ``bench`` (required only when the id exists in several selected benches),
    ``num_tokens`` and ``finish_reason`` (``"stop"``/``"length"``). Any problem (unreadable file,
    malformed row, unknown id or bench, a repeated sample) is a UsageError naming the line.
    """
    path = Path(path)
    benches_of: dict[str, list[str]] = defaultdict(list)
    for bench, bench_problems in problems.items():
        for problem in bench_problems:
            benches_of[problem.id].append(bench)
    responses: list[Response] = []
    seen: set[tuple[str, str, int]] = set()
    next_sample: dict[tuple[str, str], int] = defaultdict(int)
    for line in _lines(path):
        where = f"{path} line {line.number}"
        try:
            if line.record is None:
                raise ValueError(line.error)
            row = line.record
            if "id" not in row or not isinstance(row.get("response"), str):
                raise ValueError('needs "id" and a string "response"')
            problem_id = valid_text(str(row["id"]))
            sample = _optional_int(row, "sample")
            num_tokens = _optional_int(row, "num_tokens")
            finish_reason = row.get("finish_reason")
            if finish_reason not in (None, "stop", "length"):
                raise ValueError(f'finish_reason must be "stop" or "length", got {finish_reason!r}')
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from exc
        bench = _bench_of_row(row, problem_id, benches_of, problems, where)
        if sample is None:
            sample = next_sample[(bench, problem_id)]
        next_sample[(bench, problem_id)] = max(next_sample[(bench, problem_id)], sample + 1)
        if (bench, problem_id, sample) in seen:
            raise UsageError(f"{where}: sample {sample} of {bench}/{problem_id} appears twice")
        seen.add((bench, problem_id, sample))
        text = valid_text(row["response"])  # a lone surrogate (JSON "\ud800") cannot be written back
        responses.append(Response(bench, problem_id, sample, text, num_tokens, finish_reason))
    if not responses:
        raise UsageError(f"the responses file {path} holds no responses")
    return responses


def _lines(path: Path) -> list[JsonlLine]:
    try:
        return list(iter_jsonl(path))
    except OSError as exc:
        raise UsageError(f"cannot read the responses file {path}: {exc}") from exc


def _bench_of_row(
    row: Mapping[str, Any],
    problem_id: str,
    benches_of: Mapping[str, list[str]],
    problems: Mapping[str, Any],
    where: str,
) -> str:
    candidates = benches_of.get(problem_id, [])
    if "bench" in row:
        bench = valid_text(str(row["bench"]))
        if bench not in problems:
            raise UsageError(
                f"{where}: bench {bench!r} is not being evaluated (selected: {', '.join(problems)})"
            )
        if bench not in candidates:
            raise UsageError(f"{where}: unknown id {problem_id!r} for {bench}")
        return bench
    if not candidates:
        example = ", ".join(p.id for p in next(iter(problems.values()))[:3])
        raise UsageError(
            f"{where}: unknown id {problem_id!r}: not in {', '.join(problems)} (ids look like {example})"
        )
    if len(candidates) > 1:
        raise UsageError(
            f'{where}: id {problem_id!r} exists in {" and ".join(candidates)}; add a "bench" field'
        )
    return candidates[0]


# --------------------------------------------------------------------------- grading


def _key(bench: str, problem_id: str) -> str:
    return f"{bench}/{problem_id}"


def prompt_sha(prompt: str) -> str:
    """Short fingerprint of the exact prompt text a sample was generated from."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]


GradeFn = Callable[[Sequence[tuple[str, str]], Callable[[int], None]], list[Any]]
"""``(pairs, on_done) -> verdicts``: ``grading.grade_many`` or a reused ``GradingPool.grade``."""


def grade_responses(
    items: Sequence[tuple[Response, str, str | None]], grade_fn: GradeFn, on_done: Callable[[int], None]
) -> list[SampleRecord]:
    """Grade (response, gold, prompt fingerprint) triples; ``on_done(n)``: n more are graded."""
    verdicts = grade_fn([(r.response, gold) for r, gold, _ in items], on_done)
    return [
        SampleRecord(
            bench=r.bench,
            id=r.id,
            sample=r.sample,
            response=r.response,
            extracted=v.extracted,
            gold=gold,
            correct=v.correct,
            reason=v.reason,
            num_tokens=r.num_tokens,
            finish_reason=r.finish_reason,
            prompt_sha=sha,
        )
        for (r, gold, sha), v in zip(items, verdicts, strict=True)
    ]
