"""Run a training plan: the output directory, its manifest, and the OpenRLHF process."""

from __future__ import annotations

import datetime
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.train.eval_set import EVAL_FILE, training_template, write_eval_prompts
from infoppo_cli.train.plan import TrainPlan

MANIFEST = "manifest.json"


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


def git_commit() -> str | None:
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
        "git_commit": git_commit(),
        "seed": int(plan.flags["train.seed"]),
        "status": status,
        **extra,
    }


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


def write_eval_set(plan: TrainPlan) -> Path | None:
    """The in-training eval's prompts in the run directory, unless ``--set eval.dataset`` chose others."""
    if plan.evaluation and plan.flags.get("eval.dataset") == str(plan.output_dir / EVAL_FILE):
        return write_eval_prompts(plan.evaluation, plan.output_dir, training_template(plan.data))
    return None


def run_training(plan: TrainPlan) -> int:
    """Launch OpenRLHF with infoppo's actors; returns the process's exit code.

    ``manifest.json`` is written before the start and updated with the outcome. Ctrl-C reaches the
    child (same process group), which shuts Ray down before exiting.
    """
    require_gpu(plan)
    previous = prepare_output_dir(plan)
    write_eval_set(plan)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    first_start = (previous or {}).get("start_time", started)
    path = plan.output_dir / MANIFEST
    record = manifest(plan, "running", start_time=first_start, last_start_time=started)
    atomic_write_json(path, record)
    process = subprocess.Popen(plan.command(), env={**os.environ, **plan.secret_env})
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
    if status == "finished":  # final/ gets its model card (the results table fills in on eval)
        from infoppo_cli.rundir import RunDir, write_model_card

        write_model_card(RunDir(plan.output_dir))
    return code
