"""What ``infoppo train`` says when the run ends: how far it got, how the in-training eval moved from
the first eval point to the last, and where the model, the log and the figures are."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.rundir import RunDir, metric_series, read_metrics


@dataclass(frozen=True)
class EvalCurve:
    """One benchmark's accuracy (%, ``eval_<bench>`` in ``metrics.jsonl``) at each step it was evaluated."""

    bench: str
    points: tuple[tuple[int, float], ...]

    @property
    def best(self) -> tuple[int, float]:
        """The highest finite point, the earliest of ties (the last point when none is finite)."""
        finite = [point for point in self.points if math.isfinite(point[1])]
        return max(finite, key=lambda point: (point[1], -point[0])) if finite else self.points[-1]


def eval_curves(records: Sequence[Mapping[str, Any]], benches: Sequence[str]) -> list[EvalCurve]:
    """The benchmarks' accuracy over steps, each with at least one logged value, in ``benches`` order."""
    curves = [EvalCurve(bench, tuple(metric_series(records, f"eval_{bench}"))) for bench in benches]
    return [curve for curve in curves if curve.points]


def _curve_line(curve: EvalCurve, samples: int) -> str:
    (first_step, first), (last_step, last) = curve.points[0], curve.points[-1]
    line = f"  {curve.bench} Mean@{samples}: {first:.1f} at step {first_step}"
    if len(curve.points) > 1:
        line += f" -> {last:.1f} at step {last_step} ({last - first:+.1f})"
    best_step, best = curve.best
    if best_step != last_step:
        line += f"; best {best:.1f} at step {best_step}"
    return line


def outcome_lines(
    output_dir: Path, status: str, planned_steps: int | None, benches: Sequence[str], samples: int
) -> list[str]:
    """The closing lines of a run that ``status`` ("finished", "failed", "interrupted") ended."""
    run = RunDir(output_dir)
    log = run.metrics
    records = read_metrics(log) if log.exists() else []
    trained = [record["step"] for record in records if record.get("step", 0) > 0]
    reached = max(trained, default=0)
    of = f" of {planned_steps}" if planned_steps else ""
    lines = [f"{status}: {output_dir} after {reached}{of} RL step(s)"]
    lines += [_curve_line(curve, samples) for curve in eval_curves(records, benches)]
    if status == "finished":
        lines.append(f"  model: {run.final}")
    else:
        lines.append("  continue it from its last checkpoint with the same command and --resume")
    lines.append(f"  metrics: {log}; full log: {run.train_log}")
    lines.append(f"  figures: infoppo report {output_dir}")
    return lines
