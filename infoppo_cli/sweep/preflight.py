"""What would refuse a sweep's runs, found before any of them starts: every grid point that this
invocation would train is planned exactly as its ``infoppo train`` would be (OpenRLHF's parser, the data,
every ``--set``) and checked as its launch would be (``train/preflight.py``: the model, wandb, the run
directory and its resume state, the in-training benchmarks).

A dry run reports every problem after the grid; a real sweep is refused with the same lines before it
makes anything. A problem shared by every point checked is told once; one of some points names them. A
point that cannot be planned at all (an option its method refuses, missing data) is one ``error:`` line
at once, as for ``infoppo train``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from infoppo_cli.rundir import RunDir
from infoppo_cli.sweep.grid import GridPoint, SweepPlan
from infoppo_cli.sweep.relocate import left_running
from infoppo_cli.sweep.slurm import local_executor_requested, slurm_problem
from infoppo_cli.sweep.state import SweepState, run_was_removed
from infoppo_cli.train.builtin_task import BuildProgress
from infoppo_cli.train.plan import plan_training
from infoppo_cli.train.preflight import BenchResults, launch_problems
from infoppo_cli.train.request import PREPARE_DATA

NAMED = 3
"""A problem of some points names this many of them, then counts the rest."""


@dataclass
class SweepCheck:
    """What the checks found: the problems (one line each), the data files not prepared yet (a dry run
    plans without them) and the plans' warnings, each once."""

    problems: list[str] = field(default_factory=list)
    missing_data: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def points_to_train(
    plan: SweepPlan, existing: SweepState | None, retry_failed: bool = False
) -> list[tuple[GridPoint, bool]]:
    """The points whose train phase this invocation would start, each with whether it resumes (its run
    directory holds a started run: the sweep adds ``--resume``); a done or running train phase, or a
    failed one without ``retry_failed``, is not started again, unless its run directory was removed."""
    known = {run.name: run for run in existing.runs} if existing is not None else {}
    chosen = []
    for point in plan.points:
        record = known.get(point.name)
        status = record.phase("train").status if record is not None else "pending"
        if record is not None and run_was_removed(record):
            status = "pending"
        if status in ("done", "running") or (status == "failed" and not retry_failed):
            continue
        chosen.append((point, RunDir(plan.run_dir(point)).is_run()))
    return chosen


def _shown(message: str, names: list[str], checked: int) -> str:
    if len(names) == checked:
        return message
    listed = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
    return f"{listed}: {message}"


def check_sweep(
    plan: SweepPlan,
    existing: SweepState | None = None,
    *,
    strict_data: bool = True,
    retry_failed: bool = False,
    progress: BuildProgress | None = None,
) -> SweepCheck:
    """Plan and check every point this invocation would train (see the module). Without
    ``strict_data`` (a dry run) the default data file may be missing, as for ``train --dry-run``."""
    check = SweepCheck()
    found: dict[str, list[str]] = {}
    benches: BenchResults = {}
    points = points_to_train(plan, existing, retry_failed)
    for point, resume in points:
        request = replace(plan.train_request(point), resume=resume)
        arm = plan_training(request, strict_data=strict_data, progress=progress)  # refused: at once
        data = arm.data_to_prepare
        check.missing_data += [data] if data and data not in check.missing_data else []
        check.warnings += [warning for warning in arm.warnings if warning not in check.warnings]
        for problem in launch_problems(arm, benches):
            found.setdefault(problem, []).append(point.name)
    check.problems = [_shown(message, names, len(points)) for message, names in found.items()]
    return check


def dry_run_notes(check: SweepCheck, launcher: str, existing: SweepState | None) -> list[str]:
    """What a real run of the sweep would meet that its dry run did not stop for: data not prepared
    yet, a moved sweep directory, SLURM missing here."""
    notes = [f"{data} does not exist yet: {PREPARE_DATA}" for data in check.missing_data]
    if existing is not None and existing.moved_from:
        blocked = left_running(existing.runs, existing.moved_from)
        resumes = f"a real run would be refused: {blocked}" if blocked else "its runs resume here"
        notes.append(f"{existing.path} was written in {existing.moved_from}; {resumes}")
    problem = slurm_problem() if launcher == "slurm" and not local_executor_requested() else None
    if problem:
        notes.append(f"--launcher slurm: {problem}; a real run would be refused here")
    return notes
