"""What ``infoppo sweep`` shows: the grid table, the command lines, live progress and the summary."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from infoppo_cli.cli.console import console, progress_bar, say
from infoppo_cli.sweep.grid import KINDS, SweepPlan
from infoppo_cli.sweep.launcher import as_launched
from infoppo_cli.sweep.preflight import SweepCheck, dry_run_notes
from infoppo_cli.sweep.state import PhaseRecord, ResumeSummary, RunRecord, SweepState
from infoppo_cli.train.request import DEFAULT_WANDB_PROJECT, train_argv

_STATUS_STYLE = {"pending": "dim", "running": "cyan", "done": "green", "failed": "red"}


def _parameter_columns(plan: SweepPlan) -> list[str]:
    spec = KINDS[plan.kind]
    return [flag.lstrip("-") for flag in (*spec.flags, *spec.held)]


def _parameter_cell(column: str, value: float | str, plan: SweepPlan) -> str:
    if plan.passes(f"--{column}"):
        return "(passed)"  # a passed-through train option replaces the held value
    if isinstance(value, str):
        return value
    return repr(float(value)) if column in ("gamma", "lambd") else f"{value:g}"


def plan_table(plan: SweepPlan, state: SweepState | None = None) -> Table:
    """The grid as a table: one row per run with its arm, method, parameters, seed and status."""
    table = Table(title=f"{plan.kind} sweep, preset {plan.preset}: {len(plan.points)} runs")
    table.add_column("run", style="bold", overflow="fold")
    table.add_column("arm", no_wrap=True)
    table.add_column("method", no_wrap=True)
    columns = _parameter_columns(plan)
    for column in columns:
        table.add_column(column, justify="right")
    table.add_column("seed", justify="right")
    table.add_column("status")
    known = {run.name: run for run in state.runs} if state else {}
    for point in plan.points:
        parameters = point.parameters()
        status = known[point.name].status if point.name in known else "new"
        style = _STATUS_STYLE.get(status, "")
        table.add_row(
            point.name,
            point.time,
            point.method,
            *(_parameter_cell(column, parameters[column], plan) for column in columns),
            str(point.seed),
            f"[{style}]{status}[/]" if style else status,
        )
    return table


def command_lines(plan: SweepPlan, in_ray_job: bool = False) -> list[str]:
    """Every command the sweep would run, in order, as shell-quoted lines (a train phase's as it would
    start: inside a Ray job, joining the job's cluster)."""
    lines = []
    for point in plan.points:
        for phase, command in plan.phases(point):
            if phase == "train":
                command = train_argv(
                    as_launched(plan.train_request(point), resume=False, in_ray_job=in_ray_job)
                )
            lines.append(shlex.join(command))
    return lines


def tracking_line(plan: SweepPlan) -> str:
    """How the sweep's runs are named in wandb and TensorBoard (one line of the dry run)."""
    first = plan.train_request(plan.points[0])
    project = first.wandb_project or DEFAULT_WANDB_PROJECT
    mode = f" ({first.wandb_mode})" if first.wandb_mode else ""
    return (
        f"tracking: wandb project {project}{mode}, group {first.wandb_group}, each run named after its "
        f"grid point ({first.run_name}, ...); TensorBoard: each run's tensorboard/<run name>"
    )


def print_dry_run(
    plan: SweepPlan, state: SweepState | None, where: str, launcher: str, check: SweepCheck
) -> None:
    """``--dry-run``: the grid table, every command line, how the runs are named, then the plans'
    warnings and what a real run would meet (its problems are the caller's to report)."""
    console.print(plan_table(plan, state))
    console.print(f"Runs would go {where}; output in {plan.out_dir}", highlight=False)
    for line in command_lines(plan, in_ray_job=launcher != "local"):
        console.print(line, highlight=False, soft_wrap=True, markup=False)
    console.print(tracking_line(plan), highlight=False, soft_wrap=True, markup=False)
    for warning in check.warnings:
        say("warning", warning, to=console)
    for note in dry_run_notes(check, launcher, state):
        say("note", note, to=console)


def resume_line(resumed: ResumeSummary) -> str:
    """What resuming found: ``resuming: 3 done (skipped), 1 failed, retrying, 2 new``."""
    parts = [f"resuming: {len(resumed.done)} done (skipped)"]
    if resumed.moved_from:
        parts[0] = f"resuming (moved from {resumed.moved_from}): {len(resumed.done)} done (skipped)"
    if resumed.running:
        parts.append(f"{len(resumed.running)} were running")
    if resumed.failed_retried:
        parts.append(f"{len(resumed.failed_retried)} failed, retrying")
    if resumed.failed_kept:
        parts.append(f"{len(resumed.failed_kept)} failed, kept (use --retry-failed)")
    if resumed.removed:
        parts.append(f"{len(resumed.removed)} done but removed, running again ({', '.join(resumed.removed)})")
    if resumed.added:
        parts.append(f"{len(resumed.added)} new")
    return ", ".join(parts)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def sweep_time_left(elapsed: float, done: int, total: int) -> float | None:
    """Seconds until the sweep's last point ends: the points left at the pace of those done so far
    (wall time over points done, so points run side by side count as such); ``None`` before any."""
    if done <= 0:
        return None
    return elapsed / done * max(total - done, 0)


def points_line(done: int, total: int, left: float | None) -> str:
    """``3/12 points done, ~2h15m left``."""
    line = f"{done}/{total} points done"
    return f"{line}, ~{_duration(left)} left" if left and done < total else line


class ProgressReporter:
    """A Rich progress bar over the sweep's runs, with one line per started and finished run, each
    finished one with the points done and the sweep's time left."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._progress = progress_bar()
        self._task = None
        self._active: dict[str, str] = {}
        self._clock = clock
        self._started = clock()
        self._done = 0
        self._total = 0

    def begin(self, total: int, description: str) -> None:
        self._progress.console.print(f"Running {total} run(s) {description}", highlight=False)
        self._started, self._done, self._total = self._clock(), 0, total
        self._progress.start()
        self._task = self._progress.add_task("sweep", total=total)

    def _describe(self) -> None:
        shown = ", ".join(f"{name} ({phase})" for name, phase in self._active.items()) or "sweep"
        self._progress.update(self._task, description=shown)

    def phase_started(self, run: RunRecord, phase: PhaseRecord, attached: bool) -> None:
        verb = "re-attached to" if attached else "started"
        log = Path(run.output_dir) / f"{phase.name}.log"
        where = (
            f"Ray job {phase.ray_job_id}, log copied to {log} when it ends"
            if phase.ray_job_id
            else f"log: {log}"
        )
        self._progress.console.print(f"{verb} {run.name} {phase.name}  ({where})", highlight=False)
        self._active[run.name] = phase.name
        self._describe()

    def run_finished(self, run: RunRecord, phase: PhaseRecord) -> None:
        self._active.pop(run.name, None)
        self._done += 1
        left = sweep_time_left(self._clock() - self._started, self._done, self._total)
        points = escape(points_line(self._done, self._total, left))
        if run.status == "done":
            line = f"[green]done[/] {escape(run.name)} in {_duration(run.duration_s)}  ({points})"
        else:
            log = Path(run.output_dir) / f"{phase.name}.log"
            line = f"[red]failed[/] {escape(run.name)}: {escape(run.error or '')} (log: {log})  ({points})"
        self._progress.console.print(line, highlight=False)
        self._progress.advance(self._task)
        self._describe()

    def end(self) -> None:
        self._progress.stop()


def print_left_running(state: SweepState) -> None:
    """After Ctrl-C: the runs that keep running (Ray or SLURM jobs), which the next sweep re-attaches to."""
    left = [run.name for run in state.runs if run.status == "running"]
    if left:
        console.print(
            f"{len(left)} job(s) keep running ({', '.join(left)}); re-run to re-attach", highlight=False
        )


def summary_table(state: SweepState, names: list[str]) -> Table:
    """Status, attempts and duration of the runs ``names``."""
    table = Table(title=f"{state.kind} sweep {state.path.parent}")
    for column in ("run", "status", "attempts", "duration", "note"):
        table.add_column(column)
    for name in names:
        run = state.run(name)
        style = _STATUS_STYLE[run.status]
        table.add_row(
            run.name,
            f"[{style}]{run.status}[/]",
            str(run.attempts),
            _duration(run.duration_s),
            run.error or "",
        )
    return table


def print_seed_means(sweep_dir: Path) -> None:
    """After a sweep: its final metrics averaged over seeds (mean ± 95% CI, n), one row per grid point,
    beside the per-run table above; nothing when no run has a final metric yet."""
    from infoppo_cli.cli.report import seed_mean_table
    from infoppo_cli.report.runs import read_sweep
    from infoppo_cli.report.seed_means import SeedMean, seed_mean_rows
    from infoppo_cli.report.tables import eval_benches_of

    _, runs = read_sweep(sweep_dir, notes=[])  # missing pieces are the report's to explain
    columns, rows = seed_mean_rows(runs, eval_benches_of(runs))
    if any(isinstance(cell, SeedMean) for row in rows for cell in row):
        console.print(seed_mean_table(columns, rows))
