"""Reading what a report draws: run directories, eval output directories, sweep directories and folders
of runs.

A run directory is laid out by :mod:`infoppo_cli.rundir` (``metrics.jsonl``, ``manifest.json``,
``eval/metrics.json``); an eval output directory holds ``metrics.json``; a sweep directory holds
``sweep.json`` and its runs as ``OUT/RUN_NAME``; any other directory is searched one level deep for runs
(``infoppo report runs/``). Missing or malformed pieces become warnings naming the file and line, never a
silent gap; no run at all is a :class:`UsageError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import EVAL_DIR, METRICS_FILE, RunDir, read_metrics_log

SWEEP_FILE = "sweep.json"
EVAL_METRICS_FILE = "metrics.json"


@dataclass
class RunData:
    """Everything the report knows about one run."""

    name: str
    path: Path
    sweep: str | None = None
    kind: str | None = None
    value_label: str | None = None
    time: str | None = None
    method: str | None = None
    seed: int | None = None
    status: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, float]] = field(default_factory=list)
    eval_benches: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def arm(self) -> str:
        """The sweep arm (``info``/``token``, or the method of a components sweep); else the method."""
        return self.time or self.method or "-"

    def series(self, key: str) -> list[tuple[float, float]]:
        """(step, value) pairs of ``key`` in step order."""
        return sorted((row["step"], row[key]) for row in self.steps if key in row)

    def last(self, key: str) -> float | None:
        series = self.series(key)
        return series[-1][1] if series else None

    def final_accuracy(self, bench: str) -> tuple[float | None, str]:
        """Accuracy (percent) on ``bench`` and where it came from: the final eval's mean@k, else the
        last in-training ``eval_<bench>``."""
        score = self.eval_benches.get(bench, {}).get("mean@k")
        if is_number(score):
            return float(score), "eval"
        last = self.last(f"eval_{bench}")
        return (last, "training") if last is not None else (None, "")


@dataclass
class ReportInputs:
    runs: list[RunData]
    sweep_kinds: dict[str, str]
    """Sweep directory name -> its kind, for the final-accuracy figures."""
    notes: list[str]
    """Warnings: what is missing or malformed, naming the file (and line)."""


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _line_list(numbers: Sequence[int], shown: int = 5) -> str:
    head = ", ".join(str(number) for number in numbers[:shown])
    return head + (f" and {len(numbers) - shown} more" if len(numbers) > shown else "")


def read_metrics_jsonl(path: Path, notes: list[str], label: str) -> list[dict[str, float]]:
    """The numeric fields of each step of a ``metrics.jsonl`` (read by :func:`rundir.read_metrics_log`:
    a step logged twice after a resume keeps its later values). Bad lines are named in ``notes``."""
    if not path.exists():
        notes.append(f"{label}: no {METRICS_FILE}")
        return []
    try:
        log = read_metrics_log(path)
    except OSError as exc:
        notes.append(f"{label}: cannot read {path} ({exc.strerror or exc})")
        return []
    if log.malformed_lines:
        notes.append(
            f"{label}: skipped {len(log.malformed_lines)} malformed line(s) of {path} "
            f"(line {_line_list(log.malformed_lines)})"
        )
    if log.stepless_lines:
        notes.append(
            f"{label}: {len(log.stepless_lines)} line(s) of {path} have no integer 'step' "
            f"(line {_line_list(log.stepless_lines)}); their line number is used as the step"
        )
    if not log.records:
        notes.append(f"{label}: {path} has no training steps")
    return [{key: float(value) for key, value in row.items() if is_number(value)} for row in log.records]


def read_eval_metrics(path: Path, notes: list[str], label: str) -> dict[str, dict[str, Any]]:
    """``benches`` of an ``infoppo eval`` metrics.json ({} and a warning naming the file when unreadable)."""
    try:
        benches = json.loads(path.read_text(encoding="utf-8"))["benches"]
        if not isinstance(benches, dict):
            raise TypeError("'benches' is not an object")
        return {name: body for name, body in benches.items() if isinstance(body, dict)}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        notes.append(f"{label}: cannot read {path} ({exc}); its accuracies are left out")
        return {}


def _read_manifest_identity(run: RunData, notes: list[str]) -> None:
    """Fill the run's method and seed from its manifest (``config.method``, ``seed``)."""
    path = RunDir(run.path).manifest
    if not path.exists() or (run.method is not None and run.seed is not None):
        return
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        method = manifest.get("config", {}).get("method")
        seed = manifest.get("seed")
    except (OSError, ValueError, AttributeError) as exc:
        notes.append(f"{run.name}: cannot read {path} ({exc})")
        return
    run.method = run.method or (method if isinstance(method, str) else None)
    if run.seed is None and is_number(seed):
        run.seed = int(seed)


def read_run(path: Path, notes: list[str], **known: Any) -> RunData:
    """One run directory (or an eval output directory)."""
    run = RunData(name=known.pop("name", path.name), path=path, **known)
    layout = RunDir(path)
    if (path / EVAL_METRICS_FILE).exists() and not layout.metrics.exists():
        run.eval_benches = read_eval_metrics(path / EVAL_METRICS_FILE, notes, run.name)
        return run
    _read_manifest_identity(run, notes)
    if run.status == "pending" and not layout.metrics.exists():
        notes.append(f"{run.name}: not started yet (status pending)")
    else:
        run.steps = read_metrics_jsonl(layout.metrics, notes, run.name)
    if (layout.eval / EVAL_METRICS_FILE).exists():
        run.eval_benches = read_eval_metrics(layout.eval / EVAL_METRICS_FILE, notes, run.name)
    return run


def read_sweep(path: Path, notes: list[str]) -> tuple[str, list[RunData]]:
    """The runs of a sweep directory, labelled with their value, arm, seed and parameters."""
    try:
        sweep = json.loads((path / SWEEP_FILE).read_text(encoding="utf-8"))
        kind, records = sweep["kind"], sweep["runs"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read {path / SWEEP_FILE}: {exc}") from None
    runs = []
    for record in records:
        name = record.get("name", "?")
        run_dir = path / name
        if not run_dir.is_dir():  # a sweep copied without its runs; try where they were written
            run_dir = Path(record.get("output_dir", run_dir))
        known = {
            "name": name,
            "sweep": path.name,
            "kind": kind,
            "value_label": record.get("value_label"),
            "time": record.get("time"),
            "method": record.get("method"),
            "seed": record.get("seed"),
            "status": record.get("status"),
            "parameters": dict(record.get("parameters") or {}),
        }
        if not run_dir.is_dir():
            notes.append(f"{name}: run directory missing (status {known['status']})")
            runs.append(RunData(path=run_dir, **known))
            continue
        runs.append(read_run(run_dir, notes, **known))
    return kind, runs


def is_run_dir(path: Path) -> bool:
    names = (METRICS_FILE, RunDir(path).manifest.name, EVAL_METRICS_FILE, f"{EVAL_DIR}/{EVAL_METRICS_FILE}")
    return any((path / name).exists() for name in names)


def _runs_below(directory: Path) -> list[Path]:
    return sorted(child for child in directory.iterdir() if child.is_dir() and is_run_dir(child))


def read_inputs(dirs: Sequence[Path]) -> ReportInputs:
    """Read every directory; a missing one, one with no run in it, or no run at all is a
    :class:`UsageError`."""
    if not dirs:
        raise UsageError("give at least one run or sweep directory")
    inputs = ReportInputs(runs=[], sweep_kinds={}, notes=[])
    for directory in map(Path, dirs):
        if not directory.is_dir():
            raise UsageError(f"no such directory: {directory}")
        if (directory / SWEEP_FILE).exists():
            kind, sweep_runs = read_sweep(directory, inputs.notes)
            inputs.sweep_kinds[directory.name] = kind
            inputs.runs += sweep_runs
        elif is_run_dir(directory):
            inputs.runs.append(read_run(directory, inputs.notes))
        elif children := _runs_below(directory):
            inputs.runs += [read_run(child, inputs.notes) for child in children]
        else:
            raise UsageError(
                f"no runs found in {directory}: it is neither a run directory (metrics.jsonl, manifest.json, "
                "eval/metrics.json), a sweep directory (sweep.json) nor a folder of run directories"
            )
    if not inputs.runs:
        raise UsageError(f"no runs found in {', '.join(map(str, dirs))} (the sweep records no runs)")
    return inputs
