"""``infoppo train`` and ``infoppo presets``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Group
from rich.table import Table

from infoppo_cli.cli.console import console

if TYPE_CHECKING:
    from infoppo_cli.train.plan import TrainPlan


class Norm(StrEnum):
    batch = "batch"
    sentence = "sentence"
    global_ = "global"


def presets_table(preset_files: list[str] | None = None, methods_file: str | None = None) -> Group:
    """Every model preset and method (shipped, then the user's files) with where it comes from."""
    from infoppo_cli.train.methods import methods
    from infoppo_cli.train.presets import preset, preset_names

    table = Table(title="model presets (presets/*.toml; --preset NAME or --preset FILE.toml)")
    table.add_column("preset", no_wrap=True, style="bold")
    for column in ("model", "max response", "GPU layout", "vLLM", "ZeRO", "lr actor / critic", "source"):
        table.add_column(column)
    for name in [*preset_names(), *(preset_files or [])]:
        p = preset(name)
        lr = f"{p.openrlhf.get('actor.adam.lr')} / {p.openrlhf.get('critic.adam.lr')}"
        layout = f"{p.nodes} x {p.gpus_per_node} GPUs"
        vllm = f"{p.nodes * p.gpus_per_node // p.vllm_tensor_parallel} x TP{p.vllm_tensor_parallel}"
        zero = str(p.openrlhf.get("ds.zero_stage"))
        table.add_row(p.name, p.model, f"{p.max_response_tokens} tokens", layout, vllm, zero, lr, p.source)
    methods_table = Table(title="methods (presets/methods.toml; --methods-file FILE.toml adds more)")
    methods_table.add_column("method", no_wrap=True, style="bold")
    for column in ("advantage", "clip", "token mask", "defaults", "summary", "source"):
        methods_table.add_column(column)
    for m in methods(methods_file).values():
        defaults = {k.rsplit(".", 1)[-1]: v for k, v in m.openrlhf.items() if "gamma" in k or "lambd" in k}
        defaults.update(m.infotime)
        listed = ", ".join(f"{k}={v}" for k, v in defaults.items())
        methods_table.add_row(m.name, m.advantage, m.clip, m.token_mask, listed, m.summary, m.source)
    return Group(table, methods_table)


def plan_table(plan: TrainPlan) -> Table:
    """The resolved configuration a researcher checks before spending GPU hours."""
    from infoppo_cli.train.summary import summary_rows

    table = Table(title=f"infoppo train: {plan.preset.name} / {plan.method.name}", show_header=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    for name, value in summary_rows(plan):
        table.add_row(name, value)
    return table


METHODS_FILE_HELP = "A TOML file of more methods, in presets/methods.toml's schema."


def presets_command(
    preset_files: list[str] = typer.Option(
        None, "--preset", help="Also list this preset file (FILE.toml); repeatable."
    ),
    methods_file: str = typer.Option(None, "--methods-file", help=METHODS_FILE_HELP),
) -> None:
    """List the model presets and training methods, with the file each comes from."""
    console.print(presets_table(list(preset_files or []), methods_file))


def train_command(
    preset: str = typer.Option(
        None, "--preset", "-p", help="Model preset (see `infoppo presets`) or a preset file FILE.toml."
    ),
    method: str = typer.Option(
        None, help="infoppo | ppo | dapo | dapo-ft | info-gae | info-clip, or one of --methods-file."
    ),
    methods_file: str = typer.Option(None, "--methods-file", help=METHODS_FILE_HELP),
    model: str = typer.Option(None, help="Another model (HF id or path) with the preset's settings."),
    data: str = typer.Option(
        None, help="Prompt JSONL from `infoppo data prep` (default data/dapo-math-17k.jsonl)."
    ),
    output_dir: str = typer.Option(None, help="Run directory (default runs/PRESET-METHOD-seedN)."),
    gamma: float = typer.Option(None, help="Discount gamma in (0, 1] (infoppo default 0.999, ppo 1)."),
    lambd: float = typer.Option(None, help="GAE lambda in [0, 1] (infoppo default 0.99, ppo 1)."),
    eps_low_info: float = typer.Option(None, help="Adaptive-clip eps_low >= 0 (default 10)."),
    eps_high_info: float = typer.Option(None, help="Adaptive-clip eps_high >= 0 (default 20)."),
    norm: Norm = typer.Option(None, help="Entropy normalisation for rho (default batch)."),
    seed: int = typer.Option(None, help="Random seed >= 0 (OpenRLHF --train.seed; default 42)."),
    address: str = typer.Option(None, help="Join this Ray cluster instead of starting a local Ray."),
    nodes: int = typer.Option(None, help="Nodes to train on (default: the preset's)."),
    gpus_per_node: int = typer.Option(None, help="GPUs per node (default: the preset's)."),
    resume: bool = typer.Option(
        False, "--resume", help="Continue the run in --output-dir from its checkpoint."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the plan and the OpenRLHF command; run nothing."
    ),
    overrides: list[str] = typer.Option(None, "--set", help="Any OpenRLHF flag: --set rollout.batch_size=32"),
    eval_bench: str = typer.Option(
        None,
        "--eval-bench",
        help="In-training eval benchmarks (default aime24,aime25; NAME=FILE for a local copy; none: off).",
    ),
    eval_every: int = typer.Option(
        None, "--eval-every", help="Evaluate every N training steps (default 20)."
    ),
    eval_samples: int = typer.Option(
        None, "--eval-samples", help="Samples per problem: Mean@k (default 16)."
    ),
    list_presets: bool = typer.Option(False, "--list-presets", help="List presets and methods, then exit."),
    replay: str = typer.Option(
        None,
        "--replay",
        help="Rebuild RUN's plan from RUN/manifest.json (with --set changes), show what differs, run it.",
    ),
) -> None:
    """Train with InfoPPO (or a baseline) on OpenRLHF's Ray PPO trainer."""
    from infoppo_cli.errors import UsageError
    from infoppo_cli.train.plan import TrainRequest, plan_training

    if list_presets:
        console.print(presets_table([preset] if preset else [], methods_file))
        return
    chosen = {"--preset": preset, "--method": method, "--methods-file": methods_file, "--model": model}
    chosen |= {"--data": data, "--gamma": gamma, "--lambd": lambd, "--eps-low-info": eps_low_info}
    chosen |= {"--eps-high-info": eps_high_info, "--norm": norm, "--seed": seed, "--address": address}
    chosen |= {"--nodes": nodes, "--gpus-per-node": gpus_per_node, "--eval-bench": eval_bench}
    chosen |= {"--eval-every": eval_every, "--eval-samples": eval_samples}
    if replay:
        given = [name for name, value in chosen.items() if value is not None]
        if given:
            raise UsageError(f"--replay takes its plan from the run; use --set instead of {given[0]}")
        _replay(replay, list(overrides or []), output_dir, resume, dry_run)
        return
    if not preset:
        raise UsageError("--preset is required; see `infoppo presets` for the choices")
    request = TrainRequest(
        preset=preset,
        method=method or "infoppo",
        methods_file=methods_file,
        model=model,
        data=data,
        output_dir=output_dir,
        gamma=gamma,
        lambd=lambd,
        eps_low_info=eps_low_info,
        eps_high_info=eps_high_info,
        norm=norm.value if norm else None,
        seed=seed,
        address=address,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        resume=resume,
        overrides=list(overrides or []),
        eval_bench=eval_bench,
        eval_every=eval_every,
        eval_samples=eval_samples,
    )
    _launch_or_print(plan_training(request, strict_data=not dry_run), dry_run)


def _launch_or_print(plan: TrainPlan, dry_run: bool, after_plan: Any = None) -> None:
    """Check the output directory, show the plan (and ``after_plan``), then print the exact command
    (``--dry-run``) or run it."""
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.train.run import invocation_text, run_training

    check_output_target(plan.output_dir, kind="dir", inputs=[plan.data], option="--output-dir")
    console.print(plan_table(plan))
    if after_plan is not None:
        console.print(after_plan)
    if dry_run:
        if not Path(plan.data).exists() and Path(plan.data).is_absolute():
            console.print(
                f"[yellow]note:[/] {plan.data} does not exist yet: `infoppo data prep dapo-math-17k`"
            )
        console.print("OpenRLHF invocation:", style="bold")
        print(invocation_text(plan))
        return
    code = run_training(plan)
    if code:
        raise typer.Exit(code)


def _replay(run_dir: str, overrides: list[str], output_dir: str | None, resume: bool, dry_run: bool) -> None:
    """``--replay RUN``: the recorded plan rebuilt, the differences shown, then run like any plan."""
    from dataclasses import replace

    from infoppo_cli.train.plan import plan_training
    from infoppo_cli.train.replay import differences, read_recorded, replay_request

    recorded = read_recorded(run_dir)
    request = replace(replay_request(recorded, overrides, output_dir), resume=resume)
    plan = plan_training(request, strict_data=not dry_run)
    rows = differences(recorded, plan)
    table = Table(title=f"differences from {recorded.run_dir}")
    for column in ("what", "recorded", "now"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    same = f"no differences from {recorded.run_dir}: the same OpenRLHF command"
    _launch_or_print(plan, dry_run, table if rows else same)
