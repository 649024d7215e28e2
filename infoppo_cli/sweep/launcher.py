"""What the sweep's scheduler needs from a launcher, and what every launcher shares.

A *launcher* starts, polls, re-attaches to and stops one phase (``train`` or ``eval``) of a run; the
scheduler (:mod:`infoppo_cli.sweep.runner`) does the rest. Three implement :class:`Launcher`:
:class:`~infoppo_cli.sweep.local.LocalLauncher` (child processes),
:class:`~infoppo_cli.sweep.ray_jobs.RayJobLauncher` (Ray's job submission API) and
:class:`~infoppo_cli.sweep.slurm.SlurmLauncher` (SLURM jobs via submitit).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Protocol

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import RunDir
from infoppo_cli.rundir.lock import lock_holder
from infoppo_cli.sweep import phase_log
from infoppo_cli.sweep.kinds import RAY_JOB_ADDRESS
from infoppo_cli.sweep.liveness import process_runs_in
from infoppo_cli.sweep.state import PhaseRecord, RunRecord
from infoppo_cli.train.request import TrainRequest, recorded_request, train_argv

EXECUTABLE_ENV = "INFOPPO_SWEEP_EXECUTABLE"
"""Overrides the program that stands for ``infoppo`` in a sweep's commands (split like a shell would)."""

USAGE_EXIT_CODE = 2
"""infoppo's exit code for rejected options: every other run would be rejected too, so the sweep stops."""


def resolve_executable(remote: bool) -> list[str]:
    """The argv prefix that runs ``infoppo``: ``$INFOPPO_SWEEP_EXECUTABLE`` when set; else this
    interpreter's ``python -m infoppo_cli`` locally, and ``infoppo`` from the PATH on a Ray cluster."""
    override = os.environ.get(EXECUTABLE_ENV, "").strip()
    if override:
        return shlex.split(override)
    return ["infoppo"] if remote else [sys.executable, "-m", "infoppo_cli"]


def as_launched(request: TrainRequest, *, resume: bool, in_ray_job: bool) -> TrainRequest:
    """A run's train request as it starts: resumed when its directory holds a started run (an earlier
    attempt wrote ``manifest.json``; train refuses to overwrite it otherwise), and joining the job's
    own Ray cluster inside a Ray job (``--address auto``)."""
    address = RAY_JOB_ADDRESS if in_ray_job else request.address
    return replace(request, resume=request.resume or resume, address=address)


def launch_argv(run: RunRecord, phase: PhaseRecord, in_ray_job: bool = False) -> list[str]:
    """The phase's command as it starts: a train phase's is its recorded request, checked as a typed
    one is (:func:`~infoppo_cli.train.request.recorded_request`), :func:`as_launched`, written by
    :func:`~infoppo_cli.train.request.train_argv`; an eval phase's is its recorded command."""
    if phase.name != "train":
        return list(phase.command or [])
    resume = RunDir(Path(run.output_dir)).is_run()
    request = recorded_request(phase.request or {}, f"run {run.name}'s train request")
    return train_argv(as_launched(request, resume=resume, in_ray_job=in_ray_job))


def log_header(run: RunRecord, phase: PhaseRecord, argv: Sequence[str]) -> str:
    return phase_log.header(run.name, phase.name, run.attempts, argv)


@dataclass
class PhaseResult:
    """How a phase ended: its exit code and, when known, why."""

    exit_code: int
    note: str | None = None


@dataclass
class Handle:
    """A started phase, as its launcher tracks it."""

    run: RunRecord
    phase: PhaseRecord
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    log_file: IO[bytes] | None = None
    job_id: str | None = None
    """The Ray job id (RayJobLauncher)."""
    slurm_job: Any = None
    """submitit's job object (SlurmLauncher)."""
    slurm_job_id: str | None = None


class Launcher(Protocol):
    """Starts, polls and stops single phases; :func:`run_sweep` does the rest."""

    description: str
    in_ray_job: bool
    """Whether phases run as Ray jobs (train then joins the job's cluster)."""
    poll_interval: float
    """Seconds between polls of the running phases."""

    def job_id_for(self, run: RunRecord, phase: PhaseRecord) -> str | None:
        """The id the phase will be found by once started, known beforehand (None for local runs)."""
        ...

    def start(self, run: RunRecord, phase: PhaseRecord, argv: list[str], log_path: Path) -> Handle: ...

    def attach(self, run: RunRecord, phase: PhaseRecord, log_path: Path) -> Handle | None: ...

    def poll(self, handle: Handle) -> PhaseResult | None: ...

    def interrupt(self, handle: Handle) -> bool:
        """Stop the phase on Ctrl-C; True when it stopped, False when it keeps running (a Ray job)."""
        ...


_JOB_KINDS = {
    # launcher -> (the record field of its job id, its name, the option that re-attaches, the stop command)
    "ray": ("ray_job_id", "Ray job", "that --ray-dashboard", "ray job stop"),
    "slurm": ("slurm_job_id", "SLURM job", "--launcher slurm", "scancel"),
}


def refuse_other_launchers_job(run: RunRecord, phase: PhaseRecord, launcher: str) -> None:
    """A phase another launcher started may still run there: never start it a second time from here."""
    for name, (field_name, label, option, stop) in _JOB_KINDS.items():
        job_id = getattr(phase, field_name)
        if name != launcher and job_id is not None:
            raise UsageError(
                f"run {run.name} is {label} {job_id} of an earlier sweep; "
                f"re-run with {option} to re-attach (or `{stop} {job_id}` first)"
            )
    refuse_live_local_process(run, phase)


def refuse_live_local_process(run: RunRecord, phase: PhaseRecord) -> None:
    """A phase's process of an earlier sweep that still runs: by its recorded pid, or by the run
    directory's lock, which its ``infoppo train`` holds while it lives (``rundir/lock.py``)."""
    if phase.pid is not None and process_runs_in(phase.pid, run.output_dir):
        raise UsageError(
            f"run {run.name} is still running as process {phase.pid} from an earlier sweep; "
            f"wait for it or stop it (kill {phase.pid}), then re-run"
        )
    holder = lock_holder(Path(run.output_dir))
    if holder is not None:
        raise UsageError(
            f"run {run.name} is still running ({holder} holds {run.output_dir}); wait for it or stop it, "
            "then re-run"
        )
