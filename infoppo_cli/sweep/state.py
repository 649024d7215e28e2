"""``OUT/sweep.json``: the record of a sweep's runs, written atomically after every change.

Each run has phases (``train``, then ``eval`` when asked); a run's status follows from its phases:
``failed`` if one failed, ``done`` when all are done, ``running`` while one runs, else ``pending``.
Re-opening a sweep resumes it: done runs are skipped, failed ones reset only with ``retry_failed``,
and running ones are left for the runner to re-attach (a Ray job) or mark interrupted.
"""

from __future__ import annotations

import datetime as _dt
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.errors import UsageError
from infoppo_cli.records import utc_timestamp
from infoppo_cli.records.text import loads
from infoppo_cli.resources import stack_versions
from infoppo_cli.rundir import RunDir
from infoppo_cli.sweep.grid import GridPoint, SweepPlan
from infoppo_cli.sweep.records import PhaseRecord, RunRecord
from infoppo_cli.sweep.relocate import left_running, reroot_document
from infoppo_cli.sweepdir.schema import SWEEP_FILE, shape_problem
from infoppo_cli.train.request import TRACKING_FIELDS

STATE_FILE = SWEEP_FILE
SCHEMA_VERSION = 2
"""2: a train phase records its request (typed), not its command line (1)."""
STATUSES: tuple[str, ...] = ("pending", "running", "done", "failed")


def _seconds_between(start: str | None, end: str) -> float | None:
    if start is None:
        return None
    delta = _dt.datetime.fromisoformat(end) - _dt.datetime.fromisoformat(start)
    return round(delta.total_seconds(), 3)


@dataclass
class SweepState:
    """The whole ``sweep.json``; every mutation goes through a method that saves it."""

    path: Path
    kind: str
    preset: str
    sweep_id: str
    created: str
    updated: str
    command: list[str]
    settings: dict[str, Any]
    versions: dict[str, Any]
    runs: list[RunRecord] = field(default_factory=list)
    moved_from: str | None = None
    """The directory the file recorded when it was read from another one (its paths are re-rooted)."""

    # ---------------------------------------------------------------- persistence

    def save(self) -> None:
        """Write the state atomically: a reader sees the previous or the new file, never half of one."""
        self.updated = utc_timestamp()
        document: dict[str, Any] = {"schema": SCHEMA_VERSION}
        stored = (f.name for f in fields(self) if f.name not in ("path", "runs", "moved_from"))
        document.update({name: getattr(self, name) for name in stored})
        document["runs"] = [asdict(run) for run in self.runs]
        atomic_write_json(self.path, document)

    @classmethod
    def load(cls, path: Path) -> SweepState:
        """Read a ``sweep.json``, its paths re-rooted when the directory was moved; a file that is not
        one infoppo wrote is a :class:`UsageError` naming the file and the field."""
        path = Path(path)
        if path.exists() and not path.is_file():
            raise UsageError(f"cannot read sweep state {path}: it is not a regular file")
        try:
            document = loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            raise UsageError(f"cannot read sweep state {path}: {exc}") from None
        problem = shape_problem(document, SCHEMA_VERSION, STATUSES)
        if problem:
            raise UsageError(f"cannot read sweep state {path}: {problem}")
        moved_from = reroot_document(document, path.absolute().parent.resolve())
        runs = [_run_from_dict(run) for run in document.pop("runs")]
        document.pop("schema")
        return cls(path=path, runs=runs, moved_from=moved_from, **document)

    # ---------------------------------------------------------------- queries

    def run(self, name: str) -> RunRecord:
        """The run called ``name``."""
        return next(run for run in self.runs if run.name == name)

    def counts(self, names: Iterable[str] | None = None) -> dict[str, int]:
        """How many runs (of ``names``, default all) have each status."""
        chosen = set(names) if names is not None else None
        counts = dict.fromkeys(STATUSES, 0)
        for run in self.runs:
            if chosen is None or run.name in chosen:
                counts[run.status] += 1
        return counts

    # ---------------------------------------------------------------- transitions

    def start_phase(
        self, run: RunRecord, phase: PhaseRecord, launched: list[str], log: str, new_attempt: bool
    ) -> None:
        """Mark ``phase`` running and save; ``new_attempt`` when it starts the run (again) rather than
        continuing it with its next phase."""
        stamp = utc_timestamp()
        if new_attempt:
            run.attempts += 1
            run.started = stamp
            run.finished = run.duration_s = run.error = None
        phase.status = "running"
        phase.launched = list(launched)
        phase.log = log
        phase.started = stamp
        phase.finished = phase.duration_s = phase.exit_code = phase.pid = None
        phase.ray_job_id = phase.slurm_job_id = phase.note = None
        run.refresh_status()
        self.save()

    def record_handle(
        self,
        phase: PhaseRecord,
        *,
        pid: int | None = None,
        job_id: str | None = None,
        slurm_job_id: str | None = None,
    ) -> None:
        """Remember how to find a running phase again (pid, Ray or SLURM job id) and save."""
        phase.pid = pid
        phase.ray_job_id = job_id
        phase.slurm_job_id = slurm_job_id
        self.save()

    def finish_phase(
        self, run: RunRecord, phase: PhaseRecord, exit_code: int, note: str | None = None
    ) -> None:
        """Record a finished phase (exit 0 = done, anything else = failed) and save."""
        stamp = utc_timestamp()
        phase.exit_code = exit_code
        phase.status = "done" if exit_code == 0 else "failed"
        phase.finished = stamp
        phase.duration_s = _seconds_between(phase.started, stamp)
        phase.note = note
        run.refresh_status()
        if run.status in ("done", "failed"):
            run.finished = stamp
            run.duration_s = _seconds_between(run.started, stamp)
            run.error = None if run.status == "done" else f"{phase.name} exited with code {exit_code}"
            if note:
                run.error += f": {note}"
        self.save()

    def mark_interrupted(self, run: RunRecord, phase: PhaseRecord, note: str) -> None:
        """Put a phase that stopped without a result back to pending, keeping why, and save."""
        phase.status = "pending"
        phase.finished = utc_timestamp()
        phase.duration_s = _seconds_between(phase.started, phase.finished)
        phase.pid = None
        phase.note = note
        run.refresh_status()
        run.error = note
        self.save()


def _run_from_dict(data: dict[str, Any]) -> RunRecord:
    phases = [PhaseRecord(**phase) for phase in data.pop("phases")]
    return RunRecord(phases=phases, **data)


def _phases(plan: SweepPlan, point: GridPoint) -> list[PhaseRecord]:
    """The point's train request (its command line is written at launch) and eval command."""
    phases = [PhaseRecord(name="train", request=asdict(plan.train_request(point)))]
    evaluation = plan.eval_command(point)
    return phases + ([PhaseRecord(name="eval", command=evaluation)] if evaluation else [])


def _new_run(plan: SweepPlan, point: GridPoint) -> RunRecord:
    return RunRecord(
        name=point.name,
        kind=point.kind,
        value=list(point.value) if isinstance(point.value, tuple) else point.value,
        value_label=point.value_label,
        time=point.time,
        method=point.method,
        seed=point.seed,
        parameters=point.parameters(),
        output_dir=str(plan.run_dir(point)),
        phases=_phases(plan, point),
    )


@dataclass(frozen=True)
class ResumeSummary:
    """What opening an existing sweep found."""

    created: bool
    done: tuple[str, ...] = ()
    failed_kept: tuple[str, ...] = ()
    failed_retried: tuple[str, ...] = ()
    running: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    """Done runs whose directory was removed since: they run again."""
    moved_from: str | None = None


def open_sweep(
    plan: SweepPlan,
    *,
    command: list[str],
    settings: dict[str, Any],
    retry_failed: bool = False,
    force_new_grid: bool = False,
) -> tuple[SweepState, ResumeSummary]:
    """Create ``OUT/sweep.json`` for ``plan`` or resume the one there.

    Resuming keeps each existing run's record (in a moved directory, at its new place). Another grid
    (other values, arms or seeds) is a :class:`UsageError` naming the difference unless
    ``force_new_grid`` (then the new grid's runs are added); a run whose train request changed (another
    experiment in the same directory) is one too; a changed or added eval phase that has not run yet
    is replaced. Failed phases go back to pending only with ``retry_failed``; a done run whose
    directory was removed runs again (:func:`run_was_removed`).
    """
    path = plan.out_dir / STATE_FILE
    if not path.exists():
        stamp = utc_timestamp()
        state = SweepState(
            path=path,
            kind=plan.kind,
            preset=plan.preset,
            sweep_id=secrets.token_hex(4),
            created=stamp,
            updated=stamp,
            command=list(command),
            settings=dict(settings),
            versions=stack_versions(),
            runs=[_new_run(plan, point) for point in plan.points],
        )
        state.save()
        return state, ResumeSummary(created=True)

    state = SweepState.load(path)
    blocked = left_running(state.runs, state.moved_from) if state.moved_from else None
    if blocked:
        raise UsageError(f"cannot resume {plan.out_dir}: {blocked}")
    if (state.kind, state.preset) != (plan.kind, plan.preset):
        raise UsageError(
            f"{plan.out_dir} holds a {state.kind} sweep of preset {state.preset}; "
            f"choose another --out for a {plan.kind} sweep of {plan.preset}"
        )
    if not force_new_grid:
        _refuse_another_grid(state, plan, settings)
    added, failed_kept, failed_retried, removed = [], [], [], []
    known = {run.name: run for run in state.runs}
    for point in plan.points:
        fresh = _new_run(plan, point)
        run = known.get(point.name)
        if run is None:
            state.runs.append(fresh)
            added.append(fresh.name)
            continue
        _reconcile_phases(run, fresh)
        if run_was_removed(run):
            for phase in run.phases:
                phase.status, phase.note = "pending", "its run directory was removed: run again"
            run.refresh_status()
            removed.append(run.name)
        elif run.status == "failed":
            if retry_failed:
                for phase in run.phases:
                    if phase.status == "failed":
                        phase.status, phase.note = "pending", "retry requested (--retry-failed)"
                run.refresh_status()
                failed_retried.append(run.name)
            else:
                failed_kept.append(run.name)
    state.command = list(command)
    state.settings = dict(settings)
    state.save()
    names = {point.name for point in plan.points}
    return state, ResumeSummary(
        created=False,
        done=tuple(run.name for run in state.runs if run.name in names and run.status == "done"),
        failed_kept=tuple(failed_kept),
        failed_retried=tuple(failed_retried),
        running=tuple(run.name for run in state.runs if run.name in names and run.status == "running"),
        added=tuple(added),
        removed=tuple(removed),
        moved_from=state.moved_from,
    )


def run_was_removed(run: RunRecord) -> bool:
    """Whether the run trained, and its directory (``manifest.json``) is gone since: how a user asks
    for a run again (its eval phases too), as for one the sweep has not started."""
    return run.phase("train").status == "done" and not RunDir(Path(run.output_dir)).is_run()


GRID_SETTINGS: dict[str, str] = {
    "values": "--values",
    "time": "--time",
    "seeds": "--seeds",
    "first_seed": "--first-seed",
}
"""The recorded settings that make up a sweep's grid, and the option that sets each."""


def _refuse_another_grid(state: SweepState, plan: SweepPlan, settings: dict[str, Any]) -> None:
    """A sweep directory holds one grid: resuming into another would mix two experiments' runs."""
    recorded = {run.name for run in state.runs}
    wanted = {point.name for point in plan.points}
    if recorded == wanted:
        return
    changes = [
        f"{option} {_shown(state.settings[key])} -> {_shown(settings[key])}"
        for key, option in GRID_SETTINGS.items()
        if key in state.settings and key in settings and state.settings[key] != settings[key]
    ]
    if not changes:
        gone, new = ", ".join(sorted(recorded - wanted)) or "-", ", ".join(sorted(wanted - recorded)) or "-"
        changes = [f"runs {gone} -> {new}"]
    raise UsageError(
        f"{plan.out_dir} holds another grid ({'; '.join(changes)}); re-run with its options to resume, "
        "choose another --out, or add --force-new-grid to run the new grid's points in it"
    )


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _untracked(phase: PhaseRecord) -> dict[str, Any]:
    """What a train phase asks its run to compute: its request without the names it has in wandb and
    TensorBoard (so that the same run reads the same however it is named)."""
    return {key: value for key, value in (phase.request or {}).items() if key not in TRACKING_FIELDS}


def _runs(phase: PhaseRecord) -> Any:
    """What a phase runs: a train phase's request, an eval phase's command."""
    return phase.request if phase.name == "train" else phase.command


def _reconcile_phases(run: RunRecord, fresh: RunRecord) -> None:
    stored = {phase.name: phase for phase in run.phases}
    old_train, new_train = stored["train"], fresh.phase("train")
    renamed = _untracked(old_train) == _untracked(new_train)  # the same run
    if old_train.request != new_train.request and old_train.status != "pending" and renamed:
        if old_train.status == "failed":  # its retry uses the new names; a started phase keeps its own
            old_train.request = dict(new_train.request or {})
        new_train = old_train
    if old_train.request != new_train.request and old_train.status != "pending":
        raise UsageError(
            f"run {run.name} in {Path(run.output_dir).parent} was started with another train request "
            f"({_first_difference(old_train.request or {}, new_train.request or {})}); "
            "use a new --out for different train options"
        )
    phases = []
    for new in fresh.phases:
        old = stored.get(new.name)
        keep = old is not None and (_runs(old) == _runs(new) or old.status == "running" or old is new_train)
        phases.append(old if keep else new)
    # A phase this invocation does not ask for (e.g. eval without --eval-bench) keeps its record once it ran.
    wanted = {phase.name for phase in fresh.phases}
    phases += [old for old in run.phases if old.name not in wanted and old.status != "pending"]
    run.phases = phases
    run.refresh_status()


def _first_difference(recorded: dict[str, Any], now: dict[str, Any]) -> str:
    key = next(key for key in [*recorded, *now] if recorded.get(key) != now.get(key))
    return f"{key}: recorded {recorded.get(key)!r}, now {now.get(key)!r}"
