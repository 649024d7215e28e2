"""Run a sweep's phases as SLURM jobs through submitit, one job per phase, one Ray cluster per job.

submitit writes and submits the batch script, pickles :func:`run_phase_in_job` and its arguments, and
runs it once per node of the allocation (``tasks_per_node=1``). Inside the job the nodes form their own
Ray cluster as OpenRLHF's SLURM example does (``examples/scripts/train_ppo_llama_ray_slurm.sh``: ``ray
start --head`` on the first node, ``ray start --address HEAD:PORT --block`` on the others), and the
first node runs ``infoppo train ... --address auto`` against it; ``eval`` runs on the first node alone.
The phase's output goes to ``<run>/<phase>.log`` (the run directories are on the shared file system
SLURM jobs see); submitit's own logs and pickles stay in ``OUT/slurm/``.

The sweep records each job id in ``sweep.json`` right after submission; a sweep that stopped finds its
jobs again with submitit's job objects (``sacct`` on SLURM) and does not submit them twice.

Only SLURM's executor is ever used: submitit's automatic choice would fall back to running every job on
this machine at once when SLURM is absent (a login node would start GPU training). Where ``sbatch``,
``squeue`` or ``srun`` is missing or fails, the sweep refuses before anything starts. The tests run the
same code with submitit's local executor, which only ``INFOPPO_SWEEP_TEST_LOCAL_SLURM=1`` selects.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.sweep import phase_log
from infoppo_cli.sweep.launcher import (
    Handle,
    PhaseResult,
    log_header,
    refuse_other_launchers_job,
    resolve_executable,
)
from infoppo_cli.sweep.request import SlurmSettings
from infoppo_cli.sweep.state import PhaseRecord, RunRecord

SLURM_DIR = "slurm"
RAY_PORT = 6379
"""The head's GCS port in OpenRLHF's SLURM example."""
RAY_ENV = "INFOPPO_SWEEP_RAY"
"""Overrides the ``ray`` program started inside the job (split like a shell would)."""
NODE_WAIT_S = 300.0
LOCAL_EXECUTOR_ENV = "INFOPPO_SWEEP_TEST_LOCAL_SLURM"
"""``1`` runs the "SLURM" jobs with submitit's local executor on this machine: for tests only."""
PROBE_TIMEOUT_S = 30.0


def check_slurm_settings(settings: SlurmSettings) -> None:
    """Refuse settings SLURM would reject, before anything is submitted."""
    settings.timeout_minutes()
    if settings.nodes < 1 or settings.gpus_per_node < 0:
        raise UsageError("--slurm-nodes must be >= 1 and --slurm-gpus-per-node >= 0")


def local_executor_requested() -> bool:
    """Whether the tests asked for submitit's local executor (``INFOPPO_SWEEP_TEST_LOCAL_SLURM=1``)."""
    return os.environ.get(LOCAL_EXECUTOR_ENV, "").strip() == "1"


_PROBES = (
    ("sbatch", ["--version"]),
    ("squeue", ["--noheader", "--format=%i", f"--user={os.getuid()}"]),  # asks the controller
    ("srun", ["--version"]),  # submitit's batch script starts the job's tasks with it
)


def slurm_problem() -> str | None:
    """Why SLURM cannot take jobs from this machine (a program missing or failing), None when it can."""
    for program, args in _PROBES:
        found = shutil.which(program)
        if found is None:
            return f"{program} is not on PATH, so this machine cannot reach SLURM"
        command = shlex.join([program, *args])
        try:
            done = subprocess.run(
                [found, *args],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"`{command}` did not answer in {PROBE_TIMEOUT_S:.0f} s (is the SLURM controller up?)"
        except OSError as exc:
            return f"`{command}` cannot run: {exc.strerror or exc}"
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            return f"`{command}` failed (exit {done.returncode})" + (f": {said[0]}" if said else "")
    return None


def require_slurm() -> None:
    """Refuse ``--launcher slurm`` where SLURM cannot take jobs, before anything is created or started."""
    if local_executor_requested():
        return
    problem = slurm_problem()
    if problem:
        raise EnvironmentProblem(f"--launcher slurm: {problem}; nothing was submitted")


class SlurmLauncher:
    """Submits each phase as a SLURM job with submitit's SLURM executor (submitit's local executor, the
    same code path on one machine, only when the tests set ``INFOPPO_SWEEP_TEST_LOCAL_SLURM=1``)."""

    in_ray_job = True  # the job starts its own Ray cluster; train joins it with --address auto
    poll_interval = 15.0

    def __init__(
        self,
        out_dir: Path,
        settings: SlurmSettings,
        executable: Sequence[str] | None = None,
        *,
        checked: bool = False,
    ) -> None:
        """``checked``: the caller already ran :func:`check_slurm_settings` and :func:`require_slurm` (as
        ``infoppo sweep`` does before the sweep directory is made), so SLURM is not probed again."""
        import submitit  # lazy: only for --launcher slurm

        if not checked:
            check_slurm_settings(settings)
            require_slurm()
        self.settings = settings
        self.folder = out_dir / SLURM_DIR
        self.executable = list(executable) if executable else resolve_executable(remote=False)
        self.cluster = "local" if local_executor_requested() else "slurm"
        try:
            self._executor = submitit.AutoExecutor(folder=self.folder / "%j", cluster=self.cluster)
        except RuntimeError as exc:  # submitit's own check (srun on PATH) disagrees with ours
            raise EnvironmentProblem(f"--launcher slurm: {exc}; nothing was submitted") from None
        self.description = f"as SLURM jobs ({settings.describe()})"
        if self.cluster == "local":
            self.description += f" [submitit's local executor on this machine: {LOCAL_EXECUTOR_ENV}=1]"

    def job_id_for(self, run: RunRecord, phase: PhaseRecord) -> str | None:
        return None  # SLURM assigns it at submission; it is recorded right after

    def start(self, run: RunRecord, phase: PhaseRecord, argv: list[str], log_path: Path) -> Handle:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(log_header(run, phase, argv))
        nodes = self.settings.nodes if phase.name == "train" else 1
        parameters = self.settings.executor_parameters(f"infoppo-{run.name}-{phase.name}")
        self._executor.update_parameters(**(parameters | {"nodes": nodes}))
        command = [*self.executable, *argv[1:]]
        try:
            job = self._executor.submit(run_phase_in_job, command, str(log_path), phase.name == "train")
        except Exception as exc:  # submitit raises subprocess or its own errors with sbatch's message
            raise EnvironmentProblem(f"SLURM refused {run.name} {phase.name}: {exc}") from None
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(
                phase_log.note(f"SLURM job {job.job_id}; submitit logs in {self.folder / str(job.job_id)}")
            )
        return Handle(run=run, phase=phase, log_path=log_path, slurm_job=job, slurm_job_id=str(job.job_id))

    def attach(self, run: RunRecord, phase: PhaseRecord, log_path: Path) -> Handle | None:
        if phase.slurm_job_id is None:
            refuse_other_launchers_job(run, phase, "slurm")
            return None  # never submitted, or a local process that is gone: run it again
        job = self._executor.job_class(folder=self.folder / "%j", job_id=phase.slurm_job_id)
        return Handle(run=run, phase=phase, log_path=log_path, slurm_job=job, slurm_job_id=phase.slurm_job_id)

    def poll(self, handle: Handle) -> PhaseResult | None:
        job = handle.slurm_job
        if not _job_done(job):
            return None
        try:
            code = int(job.results()[0])  # the first node's: it ran the command (the others host Ray)
        except Exception as exc:  # FailedJobError, UncompletedJobError (timeout, cancelled, node failure)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return PhaseResult(exit_code=1, note=f"SLURM job {job.job_id} did not finish: {first}")
        return PhaseResult(exit_code=code, note=f"killed by signal {-code}" if code < 0 else None)

    def interrupt(self, handle: Handle) -> bool:
        return False  # the job runs on in SLURM; the next invocation re-attaches to it


def _job_done(job: Any) -> bool:
    """Whether a submitit job ended. A local job re-attached from another process has no process handle:
    its job id is the pid of its runner."""
    if job.paths.result_pickle.exists():
        return True
    if getattr(job, "_process", "absent") is None:  # submitit's LocalJob after a restart
        return not _pid_alive(int(job.job_id))
    return bool(job.done())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --------------------------------------------------------------------------- inside the job


def run_phase_in_job(command: list[str], log_path: str, start_ray: bool) -> int:
    """The body of one SLURM job, run on every node; returns the phase's exit code (first node).

    With ``start_ray`` the nodes form a Ray cluster first (the first node its head) and the command runs
    on the head with ``RAY_ADDRESS`` pointing at it; without it the first node runs the command alone.
    """
    import submitit  # lazy: only for --launcher slurm

    environment = submitit.JobEnvironment()
    head = environment.hostnames[0] if environment.hostnames else "127.0.0.1"
    address = f"{head}:{RAY_PORT}"
    ray = shlex.split(os.environ.get(RAY_ENV, "").strip()) or ["ray"]
    if environment.global_rank > 0:
        if start_ray:
            _join_head(ray, address)
        return 0
    env = dict(os.environ)
    with open(log_path, "ab") as log:
        if start_ray:
            head_start = [*ray, "start", "--head", "--port", str(RAY_PORT)]
            started = subprocess.call(head_start, stdout=log, stderr=log)
            if started != 0:
                return started
            env["RAY_ADDRESS"] = address
            _wait_for_nodes(ray, environment.num_nodes, env, log)
        try:
            code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, env=env)
            log.write(phase_log.footer(code).encode())  # what `ray stop` prints next is not the phase's
            log.flush()
            return code
        finally:
            if start_ray:
                with contextlib.suppress(OSError):
                    subprocess.call([*ray, "stop"], stdout=log, stderr=log)


def _join_head(ray: list[str], address: str) -> None:
    """A worker node: join the head and stay until its cluster stops. The head may not be up yet (OpenRLHF's
    example sleeps before starting workers): a join that fails at once is retried until ``NODE_WAIT_S``."""
    deadline = time.monotonic() + NODE_WAIT_S
    while True:
        started = time.monotonic()
        code = subprocess.call([*ray, "start", "--address", address, "--block"])
        if code == 0 or time.monotonic() - started > 30.0 or time.monotonic() > deadline:
            return  # it was part of the cluster until the head stopped, or the head never came
        time.sleep(5.0)


def _wait_for_nodes(ray: list[str], nodes: int, env: dict[str, str], log: Any) -> None:
    """Wait until every node of the allocation has joined (``ray status`` lists them)."""
    if nodes <= 1:
        return
    deadline = time.monotonic() + NODE_WAIT_S
    while time.monotonic() < deadline:
        status = subprocess.run([*ray, "status"], capture_output=True, text=True, env=env, check=False)
        if status.stdout.count("node_") >= nodes:
            return
        time.sleep(5.0)
    log.write(f"warning: not all {nodes} nodes joined the Ray cluster in {NODE_WAIT_S:.0f} s\n".encode())
