"""Reading what a report draws: run directories, eval output directories, sweep directories and folders
of runs.

A run directory is laid out by :mod:`infoppo_cli.rundir` (``metrics.jsonl``, ``manifest.json``,
``eval/metrics.json``); an eval output directory holds ``metrics.json``; a sweep directory holds
``sweep.json`` and its runs as ``OUT/RUN_NAME``; any other directory is searched one level deep for runs
(``infoppo report runs/``). Missing or malformed pieces become warnings naming the file and line, never a
silent gap; no run at all is a :class:`UsageError`. A value that is not finite (NaN, an infinity) is read
as data, never dropped: it is how a diverged run shows (see :mod:`infoppo_cli.report.health`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.records.text import loads
from infoppo_cli.report.eval_dirs import eval_identity
from infoppo_cli.rundir import (
    EVAL_DIR,
    EVAL_METRICS_FILE,
    METRICS_FILE,
    RunDir,
    UnreadableEvalMetrics,
    eval_metrics_path,
    metric_number,
    metric_series,
    read_eval_metrics,
    read_manifest,
    read_metrics_log,
)
from infoppo_cli.rundir.lock import run_status
from infoppo_cli.rundir.weights import short, weights_fingerprint
from infoppo_cli.sweepdir.schema import SWEEP_FILE
from infoppo_cli.train.resume import RUN_DEFINING

SETTING_ALIASES = {"lambd": ("lambd", "lambda")}
"""A setting's names in ``RunData.parameters``: a sweep's (train's option) first, then a manifest's."""


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
    model: str | None = None
    """The base model a run trained (its manifest's ``config.model``), or the model an eval evaluated."""
    parameters: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, float]] = field(default_factory=list)
    eval_benches: dict[str, dict[str, Any]] = field(default_factory=dict)
    weights: str | None = None
    """The short fingerprint of the weights ``eval_benches`` scored (``rundir/weights.py``)."""
    run_name: str | None = None
    """The name the run was given (``infoppo train --run-name``); ``None`` when it kept the default."""
    label: str | None = None
    """What a figure's legend calls the run (:func:`infoppo_cli.report.labels.label_runs`)."""
    commit: str | None = None
    """The infoppo commit the run was trained at (its manifest's ``git_commit``)."""
    command: str | None = None
    """The command that trained it, as typed (its manifest's ``infoppo_command``, else ``command``)."""
    data_file: Path | None = None
    """The CSV the run was read from (``infoppo report --csv``); ``None`` for a directory."""

    @property
    def arm(self) -> str:
        """The sweep arm (``info``/``token``, or the method of a components sweep); else the method."""
        return self.time or self.method or "-"

    @property
    def eval_only(self) -> bool:
        """An ``infoppo eval`` output directory: final scores, no training steps."""
        return not self.steps and bool(self.eval_benches) and not RunDir(self.path).metrics.exists()

    def series(self, key: str) -> list[tuple[float, float]]:
        """(step, value) pairs of ``key`` in step order, non-finite values included."""
        return metric_series(self.steps, key)

    def last_logged(self, key: str) -> tuple[float, float] | None:
        """(step, value) of the last step that logged ``key``; a NaN there is returned, not an earlier
        value."""
        series = self.series(key)
        return series[-1] if series else None

    def last(self, key: str) -> float | None:
        logged = self.last_logged(key)
        return logged[1] if logged else None

    def trained(self, setting: str) -> Any:
        """The value of ``setting`` the run trained with, under any name it is recorded by (a sweep
        names λ ``lambd``, a manifest ``lambda``); ``None`` when not recorded."""
        names = SETTING_ALIASES.get(setting, (setting,))
        return next((self.parameters[name] for name in names if name in self.parameters), None)

    def eval_score(self, bench: str, key: str = "mean@k") -> float | None:
        """``key`` of the final eval's ``bench`` (NaN stays NaN); ``None`` when it has none."""
        body = self.eval_benches.get(bench, {})
        return metric_number(body[key]) if key in body and body[key] is not None else None

    def final_accuracy(self, bench: str) -> tuple[float | None, str]:
        """Accuracy (percent) on ``bench`` and where it came from: the final eval's mean@k, else the
        last in-training ``eval_<bench>``. A non-finite score is returned as it is, never replaced."""
        score = self.eval_score(bench)
        if score is not None:
            return score, "eval"
        last = self.last(f"eval_{bench}")
        return (last, "training") if last is not None else (None, "")


@dataclass
class ReportInputs:
    runs: list[RunData]
    sweep_kinds: dict[str, str]
    """Sweep directory name -> its kind, for the final-accuracy figures."""
    notes: list[str]
    """Warnings: what is missing or malformed, naming the file (and line)."""
    sweep_commands: dict[str, str] = field(default_factory=dict)
    """Sweep directory name -> the command its ``sweep.json`` records."""
    data_comments: dict[Path, list[str]] = field(default_factory=dict)
    """Each CSV input -> its comment lines (its runs' provenance), passed on by ``--csv``."""


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
    if log.invalid_lines:
        shown = "; ".join(f"line {number}: {why}" for number, why in log.invalid_lines[:5])
        more = f"; and {len(log.invalid_lines) - 5} more" if len(log.invalid_lines) > 5 else ""
        notes.append(
            f"{label}: skipped {len(log.invalid_lines)} line(s) of {path} with invalid values ({shown}{more})"
        )
    if log.stepless_lines:
        notes.append(
            f"{label}: {len(log.stepless_lines)} line(s) of {path} have no integer 'step' "
            f"(line {_line_list(log.stepless_lines)}); their line number is used as the step"
        )
    if not log.records:
        notes.append(f"{label}: {path} has no training steps")
    return [_numbers(row) for row in log.records]


def _numbers(row: dict[str, Any]) -> dict[str, float]:
    """The metrics of one step as floats, NaN and infinities kept (see :func:`rundir.metric_number`)."""
    numbers = ((key, metric_number(value)) for key, value in row.items())
    return {key: number for key, number in numbers if number is not None}


def read_eval_document(out_dir: Path, notes: list[str], label: str) -> dict[str, Any] | None:
    """The ``metrics.json`` of the eval output directory ``out_dir`` (``None`` and a warning naming the
    file when unreadable)."""
    try:
        return read_eval_metrics(out_dir)
    except UnreadableEvalMetrics as exc:
        notes.append(
            f"{label}: cannot read {eval_metrics_path(out_dir)} ({exc}); its accuracies are left out"
        )
        return None


def eval_benches(document: dict[str, Any] | None, path: Path, notes: list[str], label: str) -> dict:
    """The per-bench entries of an eval ``document``; one without a Mean@k number is named and left out
    (a NaN Mean@k is a number here: it is kept and shown)."""
    benches = {}
    for name, body in (document or {}).get("benches", {}).items():
        if isinstance(body, dict) and "mean@k" in body and metric_number(body["mean@k"]) is not None:
            benches[name] = body
        else:
            notes.append(f"{label}: {path} has no Mean@k number for {name}; it is left out")
    return benches


def method_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The settings that define a run (``train/resume.py``: gamma, lambda, clip, learning rates, the
    adaptive clip's epsilons, ...) and its RL steps, from a manifest's ``config``, named as a sweep
    names its parameters (train's option without dashes: ``eps-low-info``); unset ones left out."""
    skip = {"method", "model", "data", "seed"}  # columns of their own, or not a hyper-parameter
    found = {key: read(config) for key, read in RUN_DEFINING.items() if key not in skip}
    found["steps"] = (config.get("infotime") or {}).get("rl_steps")
    shown = {key: "/".join(map(str, v)) if isinstance(v, list | tuple) else v for key, v in found.items()}
    return {key.replace("_", "-"): value for key, value in shown.items() if value is not None}


def _read_manifest_identity(run: RunData, notes: list[str]) -> None:
    """Fill the run's method, model, seed and status from its manifest (``config.method``,
    ``config.model``, ``seed``, ``status``) where the sweep did not say; a malformed manifest is a
    warning with the reader's line."""
    try:
        manifest = read_manifest(RunDir(run.path))
        if manifest is None:
            return
        method, model, seed, status = manifest.method, manifest.model, manifest.seed, manifest.status
        settings = method_settings(manifest.config)
        run.run_name = manifest.get("config", "request", "run_name", kind=str) or run.run_name
        run.commit, run.command = _provenance(manifest.record)
    except UsageError as exc:
        notes.append(f"{run.name}: {exc}")
        return
    run.parameters = {**settings, **run.parameters}  # what a sweep says of its point wins
    run.method = run.method or method
    run.model = run.model or model
    run.status = run.status or run_status(RunDir(run.path), status)  # "running" with no owner: interrupted
    if run.seed is None and seed is not None:
        run.seed = seed


def _provenance(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """The commit and the command a manifest records, each ``None`` when absent or malformed (a
    report can do without them)."""
    commit, typed, launched = (record.get(key) for key in ("git_commit", "infoppo_command", "command"))
    if isinstance(typed, str) and typed:
        command = typed
    elif isinstance(launched, list) and launched and all(isinstance(part, str) for part in launched):
        command = shlex.join(launched)
    else:
        command = None
    return (commit if isinstance(commit, str) and commit else None), command


def read_run(path: Path, notes: list[str], **known: Any) -> RunData:
    """One run directory (or an eval output directory)."""
    layout = RunDir(path)
    if (path / EVAL_METRICS_FILE).exists() and not layout.metrics.exists():
        return read_eval_dir(path, notes, known)
    run = RunData(name=known.pop("name", path.name), path=path, **known)
    _read_manifest_identity(run, notes)
    if run.status == "pending" and not layout.metrics.exists():
        notes.append(f"{run.name}: not started yet (status pending)")
    else:
        run.steps = read_metrics_jsonl(layout.metrics, notes, run.name)
    eval_file = layout.eval_metrics
    if eval_file.exists():
        document = read_eval_document(layout.eval, notes, run.name)
        scored = (document or {}).get("weights_fingerprint")
        now = weights_fingerprint(str(layout.final)) if layout.final.is_dir() else scored
        if scored != now:
            notes.append(
                f"{run.name}: {eval_file} scored weights {short(scored)}, and final/ now holds {short(now)} "
                "(retrained since): its scores are left out; evaluate final/ into another --out"
            )
        else:
            run.eval_benches = eval_benches(document, eval_file, notes, run.name)
            run.weights = short(scored) if scored else None
    return run


def read_eval_dir(path: Path, notes: list[str], known: dict[str, Any]) -> RunData:
    """An ``infoppo eval`` output directory, named by the model (and run) it evaluated."""
    eval_file = eval_metrics_path(path)
    document = read_eval_document(path, notes, known.get("name", path.name))
    identity = eval_identity(path, document or {}, notes)
    run = RunData(name=known.pop("name", identity.name), path=path, **known)
    run.model, run.method = run.model or identity.model, run.method or identity.method
    run.seed = run.seed if run.seed is not None else identity.seed
    run.eval_benches = eval_benches(document, eval_file, notes, run.name)
    scored = (document or {}).get("weights_fingerprint")
    run.weights = short(scored) if scored else None
    return run


def read_sweep(
    path: Path, notes: list[str], commands: dict[str, str] | None = None
) -> tuple[str, list[RunData]]:
    """The runs of a sweep directory, labelled with their value, arm, seed and parameters; ``commands``
    gets the command its ``sweep.json`` records, under the sweep's name."""
    try:
        sweep = loads((path / SWEEP_FILE).read_text(encoding="utf-8"))
        kind, records = sweep["kind"], sweep["runs"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read {path / SWEEP_FILE}: {exc}") from None
    recorded = sweep.get("command")
    if commands is not None and isinstance(recorded, list) and recorded:
        commands[path.name] = shlex.join(str(part) for part in recorded)
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


def check_dirs(dirs: Sequence[Path]) -> None:
    """Refuse, before any work, no directory at all, a missing one or a file given as one."""
    if not dirs:
        raise UsageError("give at least one run or sweep directory")
    for directory in map(Path, dirs):
        if directory.exists() and not directory.is_dir():
            raise UsageError(
                f"{directory} is a file; give run, sweep or eval output directories, or a CSV written by "
                "infoppo report --csv"
            )
        if not directory.is_dir():
            raise UsageError(f"no such directory: {directory}")


def read_inputs(dirs: Sequence[Path]) -> ReportInputs:
    """Read every directory; a missing one, one with no run in it, or no run at all is a
    :class:`UsageError`."""
    check_dirs(dirs)
    inputs = ReportInputs(runs=[], sweep_kinds={}, notes=[])
    for directory in map(Path, dirs):
        read_dir(directory, inputs)
    return finished_inputs(inputs, dirs)


def read_dir(directory: Path, inputs: ReportInputs) -> None:
    """Add the runs of one directory (a sweep, a run, or a folder of runs) to ``inputs``."""
    if (directory / SWEEP_FILE).exists():
        kind, sweep_runs = read_sweep(directory, inputs.notes, inputs.sweep_commands)
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


def finished_inputs(inputs: ReportInputs, given: Sequence[Path]) -> ReportInputs:
    """``inputs`` once every input is read: no run at all is a :class:`UsageError`; runs outside a sweep
    that share a name are told apart."""
    if not inputs.runs:
        raise UsageError(f"no runs found in {', '.join(map(str, given))} (the sweep records no runs)")
    _tell_apart(inputs.runs)
    return inputs


def _tell_apart(runs: Sequence[RunData]) -> None:
    """Runs outside a sweep that share a name (two evaluations of one model) get their directory added."""
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.name] = counts.get(run.name, 0) + 1
    for run in runs:
        if run.sweep is None and counts[run.name] > 1:
            run.name = f"{run.name} [{run.path}]"
