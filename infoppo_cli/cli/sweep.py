"""``infoppo sweep``: a grid of ``infoppo train`` runs (and evals), resumable, locally, on Ray or SLURM.

Its options are ``SweepRequest``'s and ``SlurmSettings``' fields, and ``TrainRequest``'s under train's
own names and meaning for the train options every run gets. Every grid point is an `infoppo train`
request (``SweepPlan.train_request``), launched as ``train_argv`` writes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from infoppo_cli.cli.options import Settings, given_fields, settings_of, with_settings
from infoppo_cli.errors import UsageError
from infoppo_cli.schema import dry_run_option, option
from infoppo_cli.sweep.kinds import SWEEP_CONTROLLED_FIELDS
from infoppo_cli.sweep.request import SlurmSettings, SweepRequest
from infoppo_cli.train.request import TrainRequest

if TYPE_CHECKING:
    from infoppo_cli.sweep.grid import SweepPlan

KindArgument = Annotated[
    str,
    typer.Argument(
        metavar="KIND",
        help="What to sweep: gamma, lambda, clip, norm, components (ablation arms) or methods "
        "(InfoPPO against its baselines).",
    ),
]


@dataclass
class SweepCommandOptions:
    """What ``infoppo sweep`` does besides running the grid."""

    dry_run: bool = dry_run_option()
    poll_interval: float | None = option(
        None, "Seconds between two looks at the runs (tests).", "--poll-interval"
    )


TRAIN_OPTIONS = Settings(
    TrainRequest,
    prefix="train_",
    exclude=("preset",),  # the sweep's own --preset, with a default
    hidden=SWEEP_CONTROLLED_FIELDS,  # set by the sweep for each run: refused with a hint when given
    panel="Options of every `infoppo train` run (as train's)",
)


@with_settings(
    SweepRequest,
    Settings(SlurmSettings, prefix="slurm_"),
    TRAIN_OPTIONS,
    Settings(SweepCommandOptions, hidden=("poll_interval",)),
)
def sweep_command(kind: KindArgument, **options: Any) -> None:
    """Sweep one hyper-parameter over a grid of `infoppo train` runs (and evals), resumably.

    Each grid point runs `infoppo train` in OUT/RUN_NAME, then `infoppo eval` on RUN_NAME/final.
    `infoppo sweep components` runs ppo, info-gae, info-clip and infoppo at the same gamma, lambda and seeds.
    `infoppo sweep methods` runs InfoPPO, PPO, DAPO and DAPO-FT, each with its recipe, for the same RL steps.

    OUT/sweep.json records every run; re-running the same command resumes the sweep.

    Train's options (e.g. --steps N, --data PATH, --set KEY=VALUE, --eval-bench) go to every run.
    """
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.cli.console import StageProgress, say
    from infoppo_cli.cli.problems import exit_on_problems
    from infoppo_cli.cli.sweep_display import print_dry_run
    from infoppo_cli.sweep.grid import long_sweep_warning
    from infoppo_cli.sweep.preflight import check_sweep
    from infoppo_cli.sweep.slurm import check_slurm_settings, require_slurm
    from infoppo_cli.sweep.state import STATE_FILE, SweepState

    command = settings_of(options, SweepCommandOptions)
    dry_run, poll_interval = command.dry_run, command.poll_interval
    request = SweepRequest(**given_fields(options, SweepRequest))
    slurm = SlurmSettings(**given_fields(options, SlurmSettings, prefix="slurm_"))
    train_options, secrets = request.train_options(given_fields(options, TrainRequest, prefix="train_"))
    if request.chosen_launcher == "slurm":
        check_slurm_settings(slurm)
    plan = request.plan(kind, train_options)
    os.environ.update(secrets)  # runs inherit them; commands and records show <redacted>
    check_output_target(plan.out_dir, kind="dir")
    state_path = plan.out_dir / STATE_FILE
    existing = SweepState.load(state_path) if state_path.exists() else None  # a bad file stops us here
    parallel = request.parallel(len(plan.points))
    cost = long_sweep_warning(plan, parallel)
    if cost:
        say("warning", cost)
    with StageProgress("building the preset's task") as progress:  # drawn only on a cache miss
        check = check_sweep(
            plan, existing, strict_data=not dry_run, retry_failed=request.retry_failed, progress=progress
        )
    if dry_run:
        print_dry_run(plan, existing, request.where(parallel, slurm), request.chosen_launcher, check)
        exit_on_problems(check.problems)  # every point's, after the whole grid
        return
    exit_on_problems(check.problems)  # before anything is made
    if request.chosen_launcher == "slurm":
        require_slurm()  # before the sweep directory is made: nothing starts where SLURM is absent
    _run(plan, request, slurm, parallel, poll_interval)


def _run(
    plan: SweepPlan, request: SweepRequest, slurm: SlurmSettings, parallel: int, poll_interval: float | None
) -> None:
    """Open (or resume) the sweep's record under its lock and run what is left of it; exit 1 when a run
    failed."""
    from infoppo_cli.cli import sweep_display as display
    from infoppo_cli.cli.console import console, say
    from infoppo_cli.sweep.launchers import make_launcher
    from infoppo_cli.sweep.lock import sweep_lock
    from infoppo_cli.sweep.runner import run_sweep
    from infoppo_cli.sweep.state import open_sweep

    launcher = {"launcher": request.chosen_launcher, "ray_dashboard": request.ray_dashboard}
    settings = {**plan.settings(), **launcher, "max_parallel": parallel}
    names = [point.name for point in plan.points]
    with sweep_lock(plan.out_dir) as takeover:
        if takeover:
            say("note", takeover)
        state, resumed = open_sweep(
            plan,
            command=request.resume_command(plan, parallel, slurm),
            settings=settings,
            retry_failed=request.retry_failed,
            force_new_grid=request.force_new_grid,
        )
        if not resumed.created:
            console.print(display.resume_line(resumed), highlight=False)
        runner = make_launcher(request, plan, state.sweep_id, slurm)
        try:
            outcome = run_sweep(
                state,
                names,
                runner,
                max_parallel=parallel,
                poll_interval=poll_interval,
                reporter=display.ProgressReporter(),
            )
        except KeyboardInterrupt:
            display.print_left_running(state)
            raise
        console.print(display.summary_table(state, names))
        display.print_seed_means(plan.out_dir)
        console.print(f"sweep state: {state.path}", highlight=False)
    failed = [name for name in names if state.run(name).status == "failed"]
    if outcome.aborted:
        raise UsageError(f"{outcome.aborted}; fix the options and re-run with --retry-failed")
    if failed:
        hint = "" if request.retry_failed else " (re-run with --retry-failed to run them again)"
        console.print(f"[red]{len(failed)} run(s) failed[/]{hint}", highlight=False)
        raise typer.Exit(1)
