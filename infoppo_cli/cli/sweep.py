"""``infoppo sweep``: a grid of ``infoppo train`` runs (and evals), resumable, locally, on Ray or SLURM."""

from __future__ import annotations

import dataclasses
import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from infoppo_cli.cli.options import unset_option
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import secrets_in_argv

if TYPE_CHECKING:
    from infoppo_cli.sweep.grid import SweepPlan
    from infoppo_cli.sweep.launcher import Launcher
    from infoppo_cli.sweep.slurm import SlurmSettings
    from infoppo_cli.sweep.state import ResumeSummary

CONTEXT_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Options the sweep does not know are passed to every ``infoppo train`` run."""


class LauncherName(StrEnum):
    local = "local"
    ray = "ray"
    slurm = "slurm"


def sweep_command(
    ctx: typer.Context,
    kind: str = typer.Argument(
        ..., metavar="KIND", help="What to sweep: gamma, lambda, clip, norm, or components (ablation arms)."
    ),
    preset: str = typer.Option("qwen3-4b", "--preset", help="Model preset of every run."),
    values: list[str] = unset_option(
        "--values",
        help="Grid values, comma-separated (default: the paper's grid). gamma: 1.0,0.999; lambda: 0.99,0.95; "
        "clip: EPS_LOW:EPS_HIGH pairs such as 5:10,10:20; norm: global,batch,sentence.",
    ),
    time: str = unset_option(
        "--time",
        help="Arms, comma-separated: info (InfoPPO) and/or token (PPO with the same gamma/lambda); for "
        "components any of ppo, info-gae, info-clip, infoppo. (default: info,token for gamma and lambda; "
        "info for clip and norm; all four for components)",
    ),
    seeds: int = typer.Option(1, "--seeds", help="Run seeds 1..N of every grid point."),
    out: Path = unset_option("--out", help="Sweep directory (default: sweeps/KIND-PRESET)."),
    launcher: LauncherName = unset_option(
        "--launcher",
        help="Where runs go: local (one after another), ray (Ray jobs at --address) or slurm (a SLURM job "
        "per run via submitit). (default: ray with --address, else local)",
    ),
    address: str = unset_option(
        "--address", help="Ray dashboard address (e.g. http://HEAD:8265): submit each run as a Ray job there."
    ),
    max_parallel: int = unset_option(
        "--max-parallel", help="Ray or SLURM: at most N runs at once (default: 1 on Ray, every run on SLURM)."
    ),
    slurm_partition: str = unset_option(
        "--slurm-partition", help="SLURM partition (default: the cluster's)."
    ),
    slurm_time: str = typer.Option("48:00:00", help="SLURM time limit per run, HH:MM:SS or D-HH:MM:SS."),
    slurm_nodes: int = typer.Option(1, help="SLURM nodes per training run (one Ray cluster across them)."),
    slurm_gpus_per_node: int = typer.Option(8, help="GPUs per SLURM node."),
    slurm_account: str = unset_option("--slurm-account", help="SLURM account to charge."),
    slurm_cluster: str = typer.Option(None, "--slurm-cluster", hidden=True),
    eval_bench: str = unset_option(
        "--eval-bench",
        help="After training, run `infoppo eval` on RUN/final with these benchmarks, e.g. aime24,aime25.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check every run's options, print the grid and every command; run nothing."
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run the sweep's failed runs again."),
    force_new_grid: bool = typer.Option(
        False,
        "--force-new-grid",
        help="Run another grid in a sweep directory that holds one (adds its runs).",
    ),
    poll_interval: float = typer.Option(None, "--poll-interval", hidden=True),
) -> None:
    """Sweep one hyper-parameter over a grid of `infoppo train` runs (and evals), resumably.

    Each grid point runs `infoppo train` in OUT/RUN_NAME, then `infoppo eval` on RUN_NAME/final.
    `infoppo sweep components` runs ppo, info-gae, info-clip and infoppo at the same gamma, lambda and seeds.

    OUT/sweep.json records every run; re-running the same command resumes the sweep.

    Options not listed here (e.g. --data PATH, --set KEY=VALUE) are passed to every `infoppo train`.
    """
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.cli.console import console, err_console
    from infoppo_cli.cli.sweep_display import ProgressReporter, print_dry_run, summary_table
    from infoppo_cli.sweep.grid import build_plan, parse_eval_benches
    from infoppo_cli.sweep.lock import sweep_lock
    from infoppo_cli.sweep.runner import run_sweep
    from infoppo_cli.sweep.slurm import SlurmSettings, check_slurm_settings
    from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep

    chosen = launcher or (LauncherName.ray if address else LauncherName.local)
    _check_launcher_options(chosen, address, max_parallel)
    slurm = SlurmSettings(slurm_partition, slurm_time, slurm_nodes, slurm_gpus_per_node, slurm_account)
    if chosen is LauncherName.slurm:
        check_slurm_settings(slurm)
    plan = build_plan(
        kind,
        preset=preset,
        out_dir=out if out is not None else Path("sweeps") / f"{kind}-{preset}",
        values=values,
        time=time,
        seeds=seeds,
        eval_benches=parse_eval_benches(eval_bench),
        extra_train_args=list(ctx.args),
    )
    os.environ.update(secrets_in_argv(list(ctx.args)))  # runs inherit it; commands show <redacted>
    check_output_target(plan.out_dir, kind="dir")
    check_train_commands(plan)
    parallel = max_parallel or (len(plan.points) if chosen is LauncherName.slurm else 1)
    where = {
        LauncherName.local: "locally, one after another",
        LauncherName.ray: f"as Ray jobs on {address}, at most {parallel} at once",
        LauncherName.slurm: f"as SLURM jobs ({slurm.describe()}), at most {parallel} at once",
    }[chosen]
    state_path = plan.out_dir / STATE_FILE
    if dry_run:
        existing = SweepState.load(state_path) if state_path.exists() else None
        print_dry_run(plan, existing, where, in_ray_job=chosen is not LauncherName.local)
        return

    launcher_args = _launcher_args(chosen, address, parallel, slurm)
    settings = {**plan.settings(), "launcher": chosen.value, "address": address, "max_parallel": parallel}
    with sweep_lock(plan.out_dir) as takeover:
        if takeover:
            err_console.print(f"[yellow]note:[/] {takeover}", highlight=False, soft_wrap=True)
        state, resumed = open_sweep(
            plan,
            command=plan.sweep_command(launcher_args),
            settings=settings,
            retry_failed=retry_failed,
            force_new_grid=force_new_grid,
        )
        if not resumed.created:
            console.print(_resume_line(resumed), highlight=False)
        runner = _make_launcher(chosen, plan, state.sweep_id, address, slurm, slurm_cluster)
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
        console.print(f"sweep state: {state.path}", highlight=False)
    failed = [name for name in names if state.run(name).status == "failed"]
    if outcome.aborted:
        raise UsageError(f"{outcome.aborted}; fix the options and re-run with --retry-failed")
    if failed:
        hint = "" if retry_failed else " (re-run with --retry-failed to run them again)"
        console.print(f"[red]{len(failed)} run(s) failed[/]{hint}", highlight=False)
        raise typer.Exit(1)


def _check_launcher_options(chosen: LauncherName, address: str | None, max_parallel: int | None) -> None:
    if max_parallel is not None and max_parallel < 1:
        raise UsageError(f"--max-parallel must be >= 1, got {max_parallel}")
    if chosen is LauncherName.ray and not address:
        raise UsageError("--launcher ray needs --address (the Ray dashboard, e.g. http://HEAD:8265)")
    if chosen is not LauncherName.ray and address:
        raise UsageError(f"--address is for --launcher ray, not {chosen.value}")
    if max_parallel not in (None, 1) and chosen is LauncherName.local:
        raise UsageError(
            "--max-parallel needs --address or --launcher slurm: local runs go one after another"
        )


def _launcher_args(
    chosen: LauncherName, address: str | None, parallel: int, slurm: SlurmSettings
) -> list[str]:
    """The options that resume the sweep on the same launcher (recorded in sweep.json)."""
    if chosen is LauncherName.local:
        return []
    if chosen is LauncherName.ray:
        return ["--address", str(address), "--max-parallel", str(parallel)]
    args = ["--launcher", "slurm", "--max-parallel", str(parallel), "--slurm-time", slurm.time]
    args += ["--slurm-nodes", str(slurm.nodes), "--slurm-gpus-per-node", str(slurm.gpus_per_node)]
    args += ["--slurm-partition", slurm.partition] if slurm.partition else []
    return args + (["--slurm-account", slurm.account] if slurm.account else [])


def _make_launcher(
    chosen: LauncherName,
    plan: SweepPlan,
    sweep_id: str,
    address: str | None,
    slurm: SlurmSettings,
    cluster: str | None,
) -> Launcher:
    from infoppo_cli.sweep.local import LocalLauncher
    from infoppo_cli.sweep.ray_jobs import RayJobLauncher
    from infoppo_cli.sweep.slurm import SlurmLauncher

    if chosen is LauncherName.ray:
        return RayJobLauncher(str(address), sweep_id)
    if chosen is LauncherName.slurm:
        return SlurmLauncher(plan.out_dir, slurm, cluster=cluster)
    return LocalLauncher()


def check_train_commands(plan: SweepPlan) -> None:
    """Plan the first run of every arm as `infoppo train` would (OpenRLHF's parser, the data file, every
    `--set`), so that a typo or missing data stops the sweep here, not after its first launch."""
    from infoppo_cli.cli.entry import app
    from infoppo_cli.train.plan import TrainRequest, plan_training

    train = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]
    fields = {field.name for field in dataclasses.fields(TrainRequest)}
    first_of_arm = {point.time: point for point in reversed(plan.points)}
    for point in first_of_arm.values():
        argv = plan.train_command(point)[2:]
        try:
            params = train.make_context("train", argv).params
        except Exception as exc:  # click's NoSuchOption, BadParameter ... (its usage errors)
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            raise UsageError(f"train options of the sweep: {message}") from None
        request = TrainRequest(
            **{name: value for name, value in params.items() if name in fields and value is not None}
        )
        plan_training(request, strict_data=True)


def _resume_line(resumed: ResumeSummary) -> str:
    parts = [f"resuming: {len(resumed.done)} done (skipped)"]
    if resumed.running:
        parts.append(f"{len(resumed.running)} were running")
    if resumed.failed_retried:
        parts.append(f"{len(resumed.failed_retried)} failed, retrying")
    if resumed.failed_kept:
        parts.append(f"{len(resumed.failed_kept)} failed, kept (use --retry-failed)")
    if resumed.added:
        parts.append(f"{len(resumed.added)} new")
    return ", ".join(parts)
