"""Run a training plan: the output directory, its manifest, and the OpenRLHF process."""

from __future__ import annotations

import datetime
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from rich.table import Table

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.train.plan import TrainPlan

MANIFEST = "manifest.json"


def summary_table(plan: TrainPlan) -> Table:
    """The resolved configuration a researcher checks before spending GPU hours."""
    flags, info = plan.flags, plan.infotime
    table = Table(title=f"infoppo train: {plan.preset.name} / {plan.method.name}", show_header=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    rows: list[tuple[str, Any]] = [
        ("model", plan.flags["actor.model_name_or_path"]),
        ("method", f"{plan.method.name}: {plan.method.summary}"),
        ("advantage estimator", flags.get("algo.advantage.estimator")),
        ("gamma / lambda", f"{flags.get('algo.advantage.gamma')} / {flags.get('algo.advantage.lambd')}"),
    ]
    if plan.method.name == "infoppo":
        rows.append(("adaptive clip eps_low / eps_high", f"{info['eps_low_info']} / {info['eps_high_info']}"))
        rows.append(("entropy normalisation", info["norm"]))
    else:
        rows.append(("clip low / high", flags.get("actor.eps_clip_low_high")))
    if "top_entropy_frac" in info:
        rows.append(("high-entropy token share", info["top_entropy_frac"]))
    rows += [
        ("actor lr / warm-up", f"{flags.get('actor.adam.lr')} / {plan.preset.actor_warmup_steps} steps"),
        ("critic lr", flags.get("critic.adam.lr") if plan.method.uses_critic else "no critic"),
        ("max response / total tokens", f"{flags['rollout.max_new_tokens']} / {flags['data.max_len']}"),
        (
            "prompts x samples per step",
            f"{flags['rollout.batch_size']} x {flags['rollout.n_samples_per_prompt']}",
        ),
        ("GPUs (nodes x per node)", f"{flags['actor.num_nodes']} x {flags['actor.num_gpus_per_node']}"),
        (
            "vLLM engines x tensor parallel",
            f"{flags['vllm.num_engines']} x {flags['vllm.tensor_parallel_size']}",
        ),
        ("DeepSpeed ZeRO stage", flags.get("ds.zero_stage")),
        ("data", plan.data),
        ("seed", flags.get("train.seed")),
        ("Ray", info.get("ray_address") or "embedded local Ray"),
        ("output dir", str(plan.output_dir)),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def invocation_text(plan: TrainPlan) -> str:
    """The exact command, one flag (with its values) per line, ready to paste into a shell."""
    command = plan.command()
    lines = [shlex.join(command[:3])]
    for token in command[3:]:
        if token.startswith("--"):
            lines.append(token)
        else:
            lines[-1] += f" {shlex.quote(token)}"
    return " \\\n  ".join(lines)


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def manifest(plan: TrainPlan, status: str, **extra: Any) -> dict[str, Any]:
    """The run's ``manifest.json``: resolved config, exact command, versions, commit, seed, times."""
    from dataclasses import asdict

    from infoppo_cli.resources import stack_versions

    return {
        "config": {
            "preset": plan.preset.name,
            "method": plan.method.name,
            "model": plan.flags["actor.model_name_or_path"],
            "request": asdict(plan.request),
            "openrlhf_flags": plan.flags,
            "infotime": plan.infotime,
        },
        "command": plan.command(),
        "versions": stack_versions(),
        "git_commit": _git_commit(),
        "seed": plan.request.seed,
        "status": status,
        **extra,
    }


def trained_response_length(model: str | Path) -> int | None:
    """The response length a model was trained with, when it is the ``final/`` (or an HF checkpoint)
    of an ``infoppo train`` run directory: evaluation uses the same budget (paper protocol)."""
    path = Path(model).expanduser()
    for run_dir in (path.parent, path.parent.parent):
        manifest_path = run_dir / MANIFEST
        if manifest_path.is_file():
            try:
                flags = json.loads(manifest_path.read_text(encoding="utf-8"))["config"]["openrlhf_flags"]
                return int(flags["rollout.max_new_tokens"])
            except (ValueError, KeyError, TypeError):
                return None
    return None


def prepare_output_dir(plan: TrainPlan) -> dict[str, Any] | None:
    """Refuse to overwrite an earlier run; with ``--resume`` return its manifest."""
    path = plan.output_dir / MANIFEST
    if plan.request.resume:
        if not path.exists():
            raise UsageError(f"nothing to resume: {path} does not exist")
        return json.loads(path.read_text(encoding="utf-8"))
    if path.exists():
        raise UsageError(
            f"{plan.output_dir} already holds a run; pass --resume or choose another --output-dir"
        )
    plan.output_dir.mkdir(parents=True, exist_ok=True)
    return None


def require_gpu(plan: TrainPlan) -> None:
    """A local run needs a CUDA GPU here; a cluster run (``--address``) is checked by Ray on arrival."""
    if plan.request.address:
        return
    import torch

    if not torch.cuda.is_available():
        needed = plan.flags["actor.num_nodes"] * plan.flags["actor.num_gpus_per_node"]
        raise EnvironmentProblem(
            f"no CUDA GPU on this machine: this run needs {needed} GPUs (or --address of a Ray cluster "
            "with them); `infoppo train ... --dry-run` shows the plan without a GPU"
        )


def run_training(plan: TrainPlan) -> int:
    """Launch OpenRLHF with infoppo's actors; returns the process's exit code.

    ``manifest.json`` is written before the start and updated with the outcome. Ctrl-C reaches the
    child (same process group), which shuts Ray down before exiting.
    """
    require_gpu(plan)
    previous = prepare_output_dir(plan)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    first_start = (previous or {}).get("start_time", started)
    path = plan.output_dir / MANIFEST
    record = manifest(plan, "running", start_time=first_start, last_start_time=started)
    atomic_write_json(path, record)
    process = subprocess.Popen(plan.command())
    try:
        code = process.wait()
    except KeyboardInterrupt:  # the child got the same SIGINT and is stopping its Ray workers
        code = process.wait()
        status = "interrupted"
    else:
        status = "finished" if code == 0 else "failed"
    ended = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    record.update(status=status, end_time=ended, exit_code=code)
    atomic_write_json(path, record)
    return code
