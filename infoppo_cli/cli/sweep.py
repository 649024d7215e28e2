"""``infoppo sweep``: a grid of ``infoppo train`` runs (and evals), resumable, locally, on Ray or SLURM."""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from infoppo_cli.cli.options import given_fields, option_parameter, settings_options, with_parameters
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import redact_argv, secrets_in_argv
from infoppo_cli.sweep.request import SlurmSettings, SweepRequest

if TYPE_CHECKING:
    from infoppo_cli.sweep.grid import SweepPlan
    from infoppo_cli.sweep.launcher import Launcher
    from infoppo_cli.sweep.state import ResumeSummary, SweepState

CONTEXT_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Options the sweep does not know are passed to every ``infoppo train`` run."""

KindArgument = Annotated[
    str,
    typer.Argument(
        metavar="KIND",
        help="What to sweep: gamma, lambda, clip, norm, components (ablation arms) or methods "
        "(InfoPPO against its baselines).",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run", help="Check every run's options, print the grid and every command; run nothing."
    ),
]
PollIntervalOption = Annotated[float | None, typer.Option("--poll-interval", hidden=True)]


@with_parameters(
    [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        inspect.Parameter("kind", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=KindArgument),
        *settings_options(SweepRequest),
        *settings_options(SlurmSettings, prefix="slurm_"),
        option_parameter("dry_run", DryRunOption, False),
        option_parameter("poll_interval", PollIntervalOption),
    ]
)
def sweep_command(ctx: typer.Context, kind: str, **options: Any) -> None:
    """Sweep one hyper-parameter over a grid of `infoppo train` runs (and evals), resumably.

    Each grid point runs `infoppo train` in OUT/RUN_NAME, then `infoppo eval` on RUN_NAME/final.
    `infoppo sweep components` runs ppo, info-gae, info-clip and infoppo at the same gamma, lambda and seeds.
    `infoppo sweep methods` runs InfoPPO, PPO, DAPO and DAPO-FT, each with its recipe, for the same RL steps.

    OUT/sweep.json records every run; re-running the same command resumes the sweep.

    Options not listed here (e.g. --steps N, --data PATH, --set KEY=VALUE) go to every `infoppo train`.
    """
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.cli.console import StageProgress, console, say
    from infoppo_cli.cli.problems import exit_on_problems
    from infoppo_cli.cli.sweep_display import ProgressReporter, print_dry_run, print_seed_means, summary_table
    from infoppo_cli.sweep.grid import build_plan, long_sweep_warning, parse_eval_benches
    from infoppo_cli.sweep.lock import sweep_lock
    from infoppo_cli.sweep.preflight import check_sweep
    from infoppo_cli.sweep.runner import run_sweep
    from infoppo_cli.sweep.slurm import check_slurm_settings, require_slurm
    from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep

    dry_run, poll_interval = options.pop("dry_run"), options.pop("poll_interval")
    request = SweepRequest(**given_fields(options, SweepRequest))
    train_args = request.train_args(list(ctx.args))
    slurm = SlurmSettings(**given_fields(options, SlurmSettings, prefix="slurm_"))
    chosen = request.chosen_launcher
    if chosen == "slurm":
        check_slurm_settings(slurm)
    plan = build_plan(
        kind,
        preset=request.preset,
        out_dir=request.out_dir(kind),
        values=request.values,
        time=request.time,
        seeds=request.seeds,
        eval_benches=parse_eval_benches(request.eval_bench),
        extra_train_args=train_args,
        train_options=train_options(redact_argv(train_args)),
        tracking=request.tracking(),
    )
    os.environ.update(secrets_in_argv(list(ctx.args)))  # runs inherit it; commands show <redacted>
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
    where = {
        "local": "locally, one after another",
        "ray": f"as Ray jobs on {request.address}, at most {parallel} at once",
        "slurm": f"as SLURM jobs ({slurm.describe()}), at most {parallel} at once",
    }[chosen]
    if dry_run:
        print_dry_run(plan, existing, where, in_ray_job=chosen != "local")
        console.print(tracking_line(plan), highlight=False, soft_wrap=True, markup=False)
        for warning in check.warnings:
            say("warning", warning, to=console)
        for note in _dry_run_notes(chosen, check.missing_data, existing):
            say("note", note, to=console)
        exit_on_problems(check.problems)  # every point's, after the whole grid
        return
    exit_on_problems(check.problems)  # before anything is made
    if chosen == "slurm":
        require_slurm()  # before the sweep directory is made: nothing starts where SLURM is absent

    launcher_args = _launcher_args(chosen, request.address, parallel, slurm)
    settings = {**plan.settings(), "launcher": chosen, "address": request.address, "max_parallel": parallel}
    with sweep_lock(plan.out_dir) as takeover:
        if takeover:
            say("note", takeover)
        state, resumed = open_sweep(
            plan,
            command=plan.sweep_command(launcher_args),
            settings=settings,
            retry_failed=request.retry_failed,
            force_new_grid=request.force_new_grid,
        )
        if not resumed.created:
            console.print(_resume_line(resumed), highlight=False)
        runner = _make_launcher(chosen, plan, state.sweep_id, request.address, slurm)
        names = [point.name for point in plan.points]
        try:
            outcome = run_sweep(
                state,
                names,
                runner,
                max_parallel=parallel,
                poll_interval=poll_interval,
                reporter=ProgressReporter(),
            )
        except KeyboardInterrupt:
            left = [run.name for run in state.runs if run.status == "running"]
            if left:
                console.print(
                    f"{len(left)} job(s) keep running ({', '.join(left)}); re-run to re-attach",
                    highlight=False,
                )
            raise
        console.print(summary_table(state, names))
        print_seed_means(plan.out_dir)
        console.print(f"sweep state: {state.path}", highlight=False)
    failed = [name for name in names if state.run(name).status == "failed"]
    if outcome.aborted:
        raise UsageError(f"{outcome.aborted}; fix the options and re-run with --retry-failed")
    if failed:
        hint = "" if request.retry_failed else " (re-run with --retry-failed to run them again)"
        console.print(f"[red]{len(failed)} run(s) failed[/]{hint}", highlight=False)
        raise typer.Exit(1)


def _launcher_args(chosen: str, address: str | None, parallel: int, slurm: SlurmSettings) -> list[str]:
    """The options that resume the sweep on the same launcher (recorded in sweep.json)."""
    if chosen == "local":
        return []
    if chosen == "ray":
        return ["--address", str(address), "--max-parallel", str(parallel)]
    args = ["--launcher", "slurm", "--max-parallel", str(parallel), "--slurm-time", slurm.time]
    args += ["--slurm-nodes", str(slurm.nodes), "--slurm-gpus-per-node", str(slurm.gpus_per_node)]
    args += ["--slurm-partition", slurm.partition] if slurm.partition else []
    return args + (["--slurm-account", slurm.account] if slurm.account else [])


def _make_launcher(
    chosen: str, plan: SweepPlan, sweep_id: str, address: str | None, slurm: SlurmSettings
) -> Launcher:
    from infoppo_cli.sweep.local import LocalLauncher
    from infoppo_cli.sweep.ray_jobs import RayJobLauncher
    from infoppo_cli.sweep.slurm import SlurmLauncher

    if chosen == "ray":
        return RayJobLauncher(str(address), sweep_id)
    if chosen == "slurm":
        return SlurmLauncher(plan.out_dir, slurm, checked=True)  # sweep_command checked both
    return LocalLauncher()


def train_options(args: list[str]) -> dict[str, Any]:
    """The pass-through train options as ``TrainRequest`` fields, parsed as `infoppo train` parses
    its command line (its options are declared once, on ``TrainRequest``)."""
    from infoppo_cli.cli.train import train_command
    from infoppo_cli.train.request import TrainRequest

    single = typer.Typer()
    single.command("train")(train_command)
    command = typer.main.get_command(single)
    try:
        params = command.make_context("train", list(args)).params
    except typer.TyperException as exc:  # typer's Click usage errors: no such option, a bad value
        raise UsageError(f"train options of the sweep: {exc.format_message()}") from None
    return given_fields(params, TrainRequest)


def tracking_line(plan: SweepPlan) -> str:
    """How the sweep's runs are named in wandb and TensorBoard (one line of the dry run)."""
    from infoppo_cli.train.request import DEFAULT_WANDB_PROJECT

    first = plan.points[0]
    names = plan.tracking_fields(first)
    project = names.get("wandb_project", DEFAULT_WANDB_PROJECT)
    mode = f" ({names['wandb_mode']})" if "wandb_mode" in names else ""
    return (
        f"tracking: wandb project {project}{mode}, group {names['wandb_group']}, each run named after its "
        f"grid point ({names['run_name']}, ...); TensorBoard: each run's tensorboard/<run name>"
    )


def _dry_run_notes(chosen: str, missing_data: list[str], existing: SweepState | None) -> list[str]:
    """What a real run of the sweep would meet that the dry run did not stop for."""
    from infoppo_cli.sweep.relocate import left_running
    from infoppo_cli.sweep.slurm import local_executor_requested, slurm_problem
    from infoppo_cli.train.request import PREPARE_DATA

    notes = [f"{data} does not exist yet: {PREPARE_DATA}" for data in missing_data]
    if existing is not None and existing.moved_from:
        blocked = left_running(existing.runs, existing.moved_from)
        resumes = f"a real run would be refused: {blocked}" if blocked else "its runs resume here"
        notes.append(f"{existing.path} was written in {existing.moved_from}; {resumes}")
    problem = slurm_problem() if chosen == "slurm" and not local_executor_requested() else None
    if problem:
        notes.append(f"--launcher slurm: {problem}; a real run would be refused here")
    return notes


def _resume_line(resumed: ResumeSummary) -> str:
    parts = [f"resuming: {len(resumed.done)} done (skipped)"]
    if resumed.moved_from:
        parts[0] = f"resuming (moved from {resumed.moved_from}): {len(resumed.done)} done (skipped)"
    if resumed.running:
        parts.append(f"{len(resumed.running)} were running")
    if resumed.failed_retried:
        parts.append(f"{len(resumed.failed_retried)} failed, retrying")
    if resumed.failed_kept:
        parts.append(f"{len(resumed.failed_kept)} failed, kept (use --retry-failed)")
    if resumed.added:
        parts.append(f"{len(resumed.added)} new")
    return ", ".join(parts)
