"""Per-sample details in lighteval's details layout, so results open in the tools people already use.

lighteval (``src/lighteval/logging/info_loggers.py``, ``DetailsLogger.Detail``; saved by
``EvaluationTracker.save_details``) writes one parquet file per task, ``details_<task>_<date>.parquet``,
with one row per document and three struct columns: ``doc`` (the problem: ``query``, ``choices``,
``gold_index``, ``id``, ``task_name``, ``specific``, ...), ``model_response`` (``input`` and ``text``, the
list of the document's samples, ...) and ``metric`` (the document's scores). We write the same columns
to ``OUT/details/details_<bench>.parquet`` (no date: rerunning refreshes the file in place, atomically).
As lighteval does for generative math tasks, the gold answer is ``choices[0]`` with ``gold_index`` 0.
Our per-sample grading (extracted answer, verdict, reason, tokens, finish reason) goes in
``doc.specific``, lists aligned with ``model_response.text``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_writer
from infoppo_cli.eval.sample_store import SampleRecord
from infoppo_cli.eval.statistics import GradedSample, majority_correct

DETAILS_DIR = "details"


def details_path(out_dir: str | Path, bench: str) -> Path:
    return Path(out_dir) / DETAILS_DIR / f"details_{bench}.parquet"


def detail_row(problem: Any, records: Sequence[SampleRecord], max_tokens: int | None) -> dict[str, Any]:
    """One lighteval ``Detail`` (doc, model_response, metric) for one problem and its samples."""
    graded = [GradedSample(r.correct, r.extracted, r.reason, r.num_tokens, r.finish_reason) for r in records]
    return {
        "doc": {
            "query": problem.problem,
            "choices": [problem.answer],
            "gold_index": 0,
            "id": problem.id,
            "task_name": problem.bench,
            "num_samples": len(records),
            "generation_size": max_tokens,
            "specific": {
                "sample": [r.sample for r in records],
                "extracted": [r.extracted for r in records],
                "correct": [r.correct for r in records],
                "reason": [r.reason for r in records],
                "num_tokens": [r.num_tokens for r in records],
                "finish_reason": [r.finish_reason for r in records],
                "prompt_sha": [r.prompt_sha for r in records],
            },
        },
        "model_response": {"text": [r.response for r in records]},
        "metric": {
            "mean@k": sum(r.correct for r in records) / len(records),
            "pass@k": float(any(r.correct for r in records)),
            "maj@k": majority_correct(graded),
        },
    }


def write_details(
    out_dir: str | Path,
    grouped: Mapping[str, Mapping[str, Sequence[SampleRecord]]],
    problems: Mapping[str, Sequence[Any]],
    metrics: Mapping[str, Any],
) -> list[Path]:
    """Write one details parquet per bench with graded samples; returns the files written."""
    import pyarrow as pa  # lazy: heavy, kept off eval's dry run
    import pyarrow.parquet as pq  # lazy: heavy, kept off eval's dry run

    max_tokens = metrics.get("settings", {}).get("max_tokens")
    written = []
    for bench, by_problem in grouped.items():
        rows = [
            detail_row(problem, by_problem[problem.id], max_tokens)
            for problem in problems[bench]
            if by_problem.get(problem.id)
        ]
        if not rows:
            continue
        path = details_path(out_dir, bench)
        with atomic_writer(path, "wb") as handle:
            pq.write_table(pa.Table.from_pylist(rows), handle)
        written.append(path)
    return written
