"""Run a training plan: the output directory, its manifest, and the OpenRLHF process."""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.records import utc_timestamp
from infoppo_cli.rundir import (
    Manifest,
    RunDir,
    ended,
    launch_fields,
    new_manifest,
    read_manifest,
    restore_manifest,
    write_manifest,
    write_model_card,
)
from infoppo_cli.train.eval_set import load_eval_problems, training_template, write_eval_prompts
from infoppo_cli.train.output import TrainOutput, Watcher, child_env, secret_values
from infoppo_cli.train.plan import TrainPlan
from infoppo_cli.train.provenance import base_model_record
from infoppo_cli.train.resume import check_changes, check_length


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


def planned_config(plan: TrainPlan) -> dict[str, Any]:
    """The ``config`` section of the run's manifest."""
    from dataclasses import asdict

    return {
        "preset": plan.preset.name,
        "method": plan.method.name,
        "model": plan.flags["actor.model_name_or_path"],
        "request": asdict(plan.request),
        "openrlhf_flags": plan.flags,
        "infotime": plan.infotime,
    }


def manifest(plan: TrainPlan, status: str, **launch: Any) -> dict[str, Any]:
    """The run's ``manifest.json`` for ``plan`` (built by ``rundir.manifest``: resolved config, exact
    command, versions, commit, seed, status and the ``launch``'s fields)."""
    return new_manifest(planned_config(plan), plan.command(), int(plan.flags["train.seed"]), status, **launch)


def previous_run(plan: TrainPlan) -> Manifest | None:
    """The manifest of the run ``--resume`` continues (``None`` for a new run). Refused, dry run or
    not: resuming where there is nothing to resume or nothing left to do, and a new run in a
    directory that holds another."""
    run = RunDir(plan.output_dir)
    if not plan.request.resume:
        if run.manifest.exists():
            raise UsageError(
                f"{plan.output_dir} already holds a run; pass --resume or choose another --output-dir"
            )
        return None
    try:
        previous = read_manifest(run)
        recorded_steps = previous.section("infotime").get("rl_steps") if previous else None
        status = previous.status if previous else None
    except UsageError as exc:
        raise UsageError(f"cannot resume: {exc}") from None
    if previous is None:
        raise UsageError(f"nothing to resume: {run.manifest} does not exist")
    steps = plan.length.rl_steps
    if status == "finished" and recorded_steps == steps:
        raise UsageError(
            f"{plan.output_dir} already finished its {steps} RL steps; --resume --steps N (N > {steps}) "
            "continues it"
        )
    check_length(run.ckpt, steps)
    return previous


@dataclass(frozen=True)
class LaunchCheck:
    """What :func:`check_launch` found: the resumed run's manifest (``None`` for a new run) and the
    in-training benchmarks, loaded."""

    previous: Manifest | None
    eval_problems: dict[str, list[Any]]
    changes: dict[str, Any]
    """Run settings the resume changes, as ``--resume-override`` allowed (``{key: [was, now]}``)."""


def check_resume(plan: TrainPlan) -> tuple[Manifest | None, dict[str, Any]]:
    """The run ``--resume`` continues and the settings it changes (``LaunchCheck``'s), or refused: a
    new run where one is, nothing to resume, a change ``--resume-override`` does not name."""
    previous = previous_run(plan)
    if previous is None and plan.request.resume_overrides:
        raise UsageError("--resume-override only applies with --resume")
    changes = check_changes(previous, planned_config(plan), plan.request.resume_overrides) if previous else {}
    return previous, changes


def check_launch(plan: TrainPlan) -> LaunchCheck:
    """What a launch would be refused for, checked before anything runs: the output directory and
    resume state, and the in-training benchmarks (a dry run reports each: ``train/preflight.py``)."""
    previous, changes = check_resume(plan)
    problems = load_eval_problems(plan.evaluation) if plan.evaluation else {}
    return LaunchCheck(previous, problems, changes)


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


def write_eval_set(plan: TrainPlan, problems: dict[str, list[Any]]) -> Path | None:
    """The in-training eval's prompts in the run directory, unless ``--set eval.dataset`` chose others."""
    if plan.evaluation and plan.flags.get("eval.dataset") == str(RunDir(plan.output_dir).eval_prompts):
        template = training_template(plan.data)
        return write_eval_prompts(plan.evaluation, plan.output_dir, template, problems)
    return None


def _resumed_state(run: RunDir) -> tuple[bytes, tuple[int, int] | None]:
    """The manifest's bytes and the metrics log's size and modification time: a resume that fails
    before it trains a step restores the first and leaves the second as it was."""
    metrics = run.metrics.stat() if run.metrics.exists() else None
    return run.manifest.read_bytes(), (metrics.st_size, metrics.st_mtime_ns) if metrics else None


def run_training(
    plan: TrainPlan, checked: LaunchCheck | None = None, watcher: Watcher | None = None, verbose: bool = False
) -> int:
    """Launch OpenRLHF with infoppo's actors; returns the process's exit code.

    ``manifest.json`` is written before the start and updated with the outcome; a resume that fails
    before training a step restores the manifest it found (a finished run never reads "failed").
    Ctrl-C reaches the child (same process group), which shuts Ray down before exiting. The child's
    output goes to the run's ``train.log``; ``watcher`` shows the per-step lines, and every line with
    ``verbose`` (``output.py``).
    """
    if plan.infotime.get("device") != "cpu":
        require_gpu(plan)
    checked = checked or check_launch(plan)
    previous = checked.previous
    plan.output_dir.mkdir(parents=True, exist_ok=True)
    run = RunDir(plan.output_dir)
    kept = _resumed_state(run) if previous is not None else None
    write_eval_set(plan, checked.eval_problems)
    started = utc_timestamp()
    launch = launch_fields(previous, started, plan.typed_command, checked.changes, base_model_record(plan))
    record = manifest(plan, "running", **launch)
    write_manifest(run, record)
    env = child_env({**os.environ, **plan.tracking_env, **plan.secret_env})
    with TrainOutput(run.train_log, watcher, verbose, secret_values(env)) as output:
        output.begin(plan.command(), resumed=previous is not None)
        process = subprocess.Popen(plan.command(), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            code = output.pump(process)
        except KeyboardInterrupt:  # the child got the same SIGINT and is stopping its Ray workers
            code = output.pump(process)
            status = "interrupted"
        else:
            status = "finished" if code == 0 else "failed"
        output.end(code, status)
    if kept is not None and status == "failed" and _resumed_state(run)[1] == kept[1]:
        restore_manifest(run, kept[0])  # nothing trained: the run is left as it was
        return code
    write_manifest(run, ended(record, status, code))
    if status == "finished":  # final/ gets its model card (the results table fills in on eval)
        write_model_card(run)
    return code
