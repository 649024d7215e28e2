"""``infoppo sweep``: a grid of ``infoppo train`` runs (and evals), resumable, locally or on Ray."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from infoppo_cli.errors import UsageError

if TYPE_CHECKING:
    from infoppo_cli.sweep.state import ResumeSummary

CONTEXT_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Options the sweep does not know are passed to every ``infoppo train`` run."""


def sweep_command(
    ctx: typer.Context,
    kind: str = typer.Argument(..., metavar="KIND", help="What to sweep: gamma, lambda, clip or norm."),
    preset: str = typer.Option("qwen3-4b", "--preset", help="Model preset of every run."),
    values: list[str] = typer.Option(
        None,
        "--values",
        help="Grid values, comma-separated (default: the paper's grid). gamma: 1.0,0.999; lambda: 0.99,0.95; "
        "clip: EPS_LOW:EPS_HIGH pairs such as 5:10,10:20; norm: global,batch,sentence.",
        show_default=False,
    ),
    time: str = typer.Option(
        None,
        "--time",
        help="Time arms, comma-separated: info (InfoPPO) and/or token (PPO with the same gamma/lambda). "
        "(default: info,token for gamma and lambda; info for clip and norm)",
        show_default=False,
    ),
    seeds: int = typer.Option(1, "--seeds", help="Run seeds 1..N of every grid point."),
    out: Path = typer.Option(
        None, "--out", help="Sweep directory (default: sweeps/KIND-PRESET).", show_default=False
    ),
    address: str = typer.Option(
        None,
        "--address",
        help="Ray dashboard address (e.g. http://HEAD:8265): submit each run as a Ray job there. "
        "Without it, runs go one after another on this machine.",
        show_default=False,
    ),
    max_parallel: int = typer.Option(
        None,
        "--max-parallel",
        help="With --address: at most N runs at once (default: 1).",
        show_default=False,
    ),
    eval_bench: str = typer.Option(
        None,
        "--eval-bench",
        help="After training, run `infoppo eval` on RUN/final with these benchmarks, e.g. aime24,aime25.",
        show_default=False,
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the grid and every command; run nothing."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run the sweep's failed runs again."),
    poll_interval: float = typer.Option(None, "--poll-interval", hidden=True),
) -> None:
    """Sweep one hyper-parameter over a grid of `infoppo train` runs (and evals), resumably.

    Each grid point runs `infoppo train` in OUT/RUN_NAME, then `infoppo eval` on RUN_NAME/final.

    OUT/sweep.json records every run; re-running the same command resumes the sweep.

    Options not listed here (e.g. --data PATH, --set KEY=VALUE) are passed to every `infoppo train`.
    """
    from infoppo_cli.cli.console import console
    from infoppo_cli.cli.sweep_display import ProgressReporter, print_dry_run, summary_table
    from infoppo_cli.sweep.grid import build_plan, parse_eval_benches
    from infoppo_cli.sweep.runner import LocalLauncher, RayJobLauncher, run_sweep
    from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep, sweep_lock

    if max_parallel is not None and max_parallel < 1:
        raise UsageError(f"--max-parallel must be >= 1, got {max_parallel}")
    if max_parallel not in (None, 1) and address is None:
        raise UsageError("--max-parallel needs --address: without a Ray cluster runs go one after another")
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
    parallel = max_parallel or 1
    where = (
        f"as Ray jobs on {address}, at most {parallel} at once" if address else "locally, one after another"
    )
    state_path = plan.out_dir / STATE_FILE
    if dry_run:
        existing = SweepState.load(state_path) if state_path.exists() else None
        print_dry_run(plan, existing, where, in_ray_job=address is not None)
        return

    settings = {**plan.settings(), "address": address, "max_parallel": parallel}
    with sweep_lock(plan.out_dir):
        state, resumed = open_sweep(
            plan,
            command=plan.sweep_command(address, parallel),
            settings=settings,
            retry_failed=retry_failed,
        )
        if not resumed.created:
            console.print(_resume_line(resumed), highlight=False)
        launcher = RayJobLauncher(address, state.sweep_id) if address else LocalLauncher()
        names = [point.name for point in plan.points]
        try:
            outcome = run_sweep(
                state,
                names,
                launcher,
                max_parallel=parallel,
                poll_interval=poll_interval,
                reporter=ProgressReporter(),
            )
        except KeyboardInterrupt:
            left = [run.name for run in state.runs if run.status == "running"]
            if left:
                console.print(
                    f"{len(left)} Ray job(s) keep running ({', '.join(left)}); re-run to re-attach",
                    highlight=False,
                )
            raise
        console.print(summary_table(state, names))
        console.print(f"sweep state: {state.path}", highlight=False)
    if outcome.aborted:
        raise UsageError(f"{outcome.aborted}; fix the options and re-run with --retry-failed")
    failed = [name for name in names if state.run(name).status == "failed"]
    if failed:
        hint = "" if retry_failed else " (re-run with --retry-failed to run them again)"
        console.print(f"[red]{len(failed)} run(s) failed[/]{hint}", highlight=False)
        raise typer.Exit(1)


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
