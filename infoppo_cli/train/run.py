"""Run a training plan: the output directory, its manifest, and the OpenRLHF process."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.openrlhf_adapter.checkpoints import run_disk_bytes
from infoppo_cli.openrlhf_adapter.lifeline import start_owned
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
from infoppo_cli.rundir.lock import busy_refusal, last_holder, lock_holder, run_lock, run_status
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
            why = _interruption(run)
            state = "" if why is None else f" that was interrupted{why}"
            raise UsageError(
                f"{plan.output_dir} already holds a run{state}; pass --resume or choose another --output-dir"
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
    done = check_length(run.ckpt, steps, recorded_steps if status == "finished" else None)
    why = _interruption(run)
    if why is not None:
        start = f"its checkpoint of step {done}" if done else "step 0 (it saved no checkpoint)"
        note = f"{plan.output_dir}: the run was interrupted{why}; --resume continues from {start}"
        if note not in plan.warnings:
            plan.warnings.append(note)
    return previous


def _interruption(run: RunDir) -> str | None:
    """Why the run in ``run`` stopped before its end, as `` (...)`` (empty when unknown); ``None`` when
    it did not: it finished, failed, never started, or still runs."""
    with contextlib.suppress(UsageError):  # an unreadable manifest is reported where it is read
        previous = read_manifest(run)
        recorded = previous.status if previous else None
        if run_status(run, recorded) != "interrupted":
            return None
        holder = last_holder(run) if recorded == "running" else None  # it died recording nothing
        return f" (its infoppo process, {holder}, died while it trained)" if holder else ""
    return None


@dataclass(frozen=True)
class LaunchCheck:
    """What :func:`check_launch` found: the resumed run's manifest (``None`` for a new run) and the
    in-training benchmarks, loaded."""

    previous: Manifest | None
    eval_problems: dict[str, list[Any]]
    changes: dict[str, Any]
    """Run settings the resume changes, as ``--resume-override`` allowed (``{key: [was, now]}``)."""


def check_resume(plan: TrainPlan, locked: bool = False) -> tuple[Manifest | None, dict[str, Any]]:
    """The run ``--resume`` continues and the settings it changes (``LaunchCheck``'s), or refused: a
    directory another infoppo command holds (unless this one does: ``locked``), a new run where one
    is, nothing to resume, a change ``--resume-override`` does not name."""
    holder = None if locked else lock_holder(plan.output_dir)
    if holder is not None:
        raise UsageError(busy_refusal(RunDir(plan.output_dir), holder))
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
    import torch  # lazy: heavy, kept off sweep planning

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

    The run directory is this process's for the run's life (``RUN/.infoppo.lock``, handed to the launch
    process too): a second command on it is refused. ``manifest.json`` is written before the start and
    updated with the outcome; a resume that fails before training a step restores the manifest it
    found (a finished run never reads "failed"). The launch process runs in a session of its own and
    dies with this one, however this one dies (``openrlhf_adapter/lifeline.py``); Ctrl-C or SIGTERM
    here is passed on to it (:func:`_stop_launch`). The child's output goes to the run's
    ``train.log``; ``watcher`` shows the per-step lines, and every line with ``verbose``
    (``output.py``).
    """
    if plan.device.uses_gpus:
        require_gpu(plan)
    checked = checked or check_launch(plan)
    plan.output_dir.mkdir(parents=True, exist_ok=True)
    run = RunDir(plan.output_dir)
    lock = run_lock(run)
    if not lock.acquire():
        raise UsageError(busy_refusal(run, lock.holder()))
    try:
        previous, changes = check_resume(plan, locked=True)  # again: the directory is ours only now
        return _launch(
            plan, run, LaunchCheck(previous, checked.eval_problems, changes), lock.fileno(), watcher, verbose
        )
    finally:
        lock.release()


def _launch(
    plan: TrainPlan, run: RunDir, checked: LaunchCheck, lock_fd: int, watcher: Watcher | None, verbose: bool
) -> int:
    previous = checked.previous
    kept = _resumed_state(run) if previous is not None else None
    write_eval_set(plan, checked.eval_problems)
    started = utc_timestamp()
    launch = launch_fields(previous, started, plan.typed_command, checked.changes, base_model_record(plan))
    record = manifest(plan, "running", **launch)
    write_manifest(run, record)
    plan.write_config()
    env = child_env({**os.environ, **plan.tracking_env, **plan.secret_env})
    peak = run_disk_bytes(plan.flags, plan.method.uses_critic)
    output = TrainOutput(run.train_log, watcher, verbose, secret_values(env), peak)
    with output, _sigterm_as_interrupt():
        output.begin(plan.command(), resumed=previous is not None)
        process = start_owned(
            plan.command(), env=env, pass_fds=(lock_fd,), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        try:
            code = output.pump(process)
        except KeyboardInterrupt:
            code = _stop_launch(process, output)
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


def _stop_launch(process: subprocess.Popen[bytes], output: TrainOutput) -> int:
    """After Ctrl-C (or SIGTERM) here: SIGINT to the launch process, which shuts Ray down and exits;
    a second Ctrl-C kills its process group (Ray's processes and the trainer with it) at once. Its
    exit code, once its output has been read to the end."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGINT)
    try:
        return output.pump(process)
    except KeyboardInterrupt:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return output.pump(process)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a batch scheduler's stop, a sweep's, ``kill``) stops the run as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
