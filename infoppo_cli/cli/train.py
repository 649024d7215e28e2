"""``infoppo train`` and ``infoppo presets``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from infoppo_cli.cli.console import console


class Norm(StrEnum):
    batch = "batch"
    sentence = "sentence"
    global_ = "global"


def presets_table() -> Table:
    """Every model preset with its model, lengths, GPU layout and the methods' defaults."""
    from infoppo_cli.train.presets import methods, preset, preset_names

    table = Table(title="infoppo presets (presets/*.toml)")
    table.add_column("preset", no_wrap=True, style="bold")
    for column in ("model", "max response", "GPU layout", "vLLM", "ZeRO", "lr actor / critic"):
        table.add_column(column)
    for name in preset_names():
        p = preset(name)
        lr = f"{p.openrlhf.get('actor.adam.lr')} / {p.openrlhf.get('critic.adam.lr')}"
        layout = f"{p.nodes} x {p.gpus_per_node} GPUs"
        vllm = f"{p.nodes * p.gpus_per_node // p.vllm_tensor_parallel} x TP{p.vllm_tensor_parallel}"
        zero = str(p.openrlhf.get("ds.zero_stage"))
        table.add_row(name, p.model, f"{p.max_response_tokens} tokens", layout, vllm, zero, lr)
    methods_table = Table(title="methods (presets/methods.toml)")
    methods_table.add_column("method", no_wrap=True, style="bold")
    for column in ("defaults", "summary"):
        methods_table.add_column(column)
    for m in methods().values():
        defaults = {
            k.rsplit(".", 1)[-1]: v
            for k, v in m.openrlhf.items()
            if "gamma" in k or "lambd" in k or "clip" in k
        }
        defaults.update(m.infotime)
        methods_table.add_row(m.name, ", ".join(f"{k}={v}" for k, v in defaults.items()), m.summary)
    from rich.console import Group

    return Group(table, methods_table)


def presets_command() -> None:
    """List the model presets and training methods."""
    console.print(presets_table())


def train_command(
    preset: str = typer.Option(None, "--preset", "-p", help="Model preset (see `infoppo presets`)."),
    method: str = typer.Option("infoppo", help="infoppo | ppo | dapo | dapo-ft"),
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
    seed: int = typer.Option(42, help="Random seed (OpenRLHF --train.seed)."),
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
    list_presets: bool = typer.Option(False, "--list-presets", help="List presets and methods, then exit."),
) -> None:
    """Train with InfoPPO (or a baseline) on OpenRLHF's Ray PPO trainer."""
    from infoppo_cli.errors import UsageError
    from infoppo_cli.train.plan import TrainRequest, plan_training
    from infoppo_cli.train.run import invocation_text, run_training, summary_table

    if list_presets:
        presets_command()
        return
    if not preset:
        raise UsageError("--preset is required; see `infoppo presets` for the choices")
    request = TrainRequest(
        preset=preset,
        method=method,
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
    )
    plan = plan_training(request, strict_data=not dry_run)
    console.print(summary_table(plan))
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
