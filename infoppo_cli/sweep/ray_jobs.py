"""Run a sweep's phases as Ray jobs on a cluster (Ray's job submission API); their logs are copied into
``<run>/<phase>.log`` when they end, and a sweep that stopped re-attaches to the jobs that outlived it."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.errors import EnvironmentProblem
from infoppo_cli.sweep import phase_log
from infoppo_cli.sweep.launcher import (
    Handle,
    PhaseResult,
    log_header,
    refuse_other_launchers_job,
    resolve_executable,
)
from infoppo_cli.sweep.state import PhaseRecord, RunRecord


class RayJobLauncher:
    """Submits each phase as a Ray job (``JobSubmissionClient``) and collects its logs when it ends.

    The job's entrypoint is the phase's command line, run by the cluster's ``infoppo``; the run
    directories must be on a file system the cluster sees (absolute paths are used).
    """

    def __init__(
        self,
        address: str,
        sweep_id: str,
        executable: Sequence[str] | None = None,
        max_poll_failures: int = 30,
        submit_timeout_s: float = 120.0,
    ) -> None:
        self.address = address
        self.sweep_id = sweep_id
        self.executable = list(executable) if executable else resolve_executable(remote=True)
        self.max_poll_failures = max_poll_failures
        self.submit_timeout_s = submit_timeout_s
        self.description = f"as Ray jobs on {address}"
        self.in_ray_job = True
        self.poll_interval = 5.0
        self._failures = 0
        self._client = self._connect(address)

    @staticmethod
    def _connect(address: str) -> Any:
        from ray.job_submission import JobSubmissionClient  # lazy: only for --launcher ray

        try:
            return JobSubmissionClient(address)
        except Exception as exc:  # Ray raises ConnectionError, ValueError or RuntimeError here
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EnvironmentProblem(
                f"cannot reach the Ray cluster at {address}: {first} "
                "(--ray-dashboard takes the dashboard address, e.g. http://HEAD_NODE:8265)"
            ) from None

    def job_id_for(self, run: RunRecord, phase: PhaseRecord) -> str:
        """Deterministic per attempt, so a job submitted just before a crash can be found again."""
        return f"infoppo-{self.sweep_id}-{run.name}-{phase.name}-{run.attempts}"

    def start(self, run: RunRecord, phase: PhaseRecord, argv: list[str], log_path: Path) -> Handle:
        job_id = self.job_id_for(run, phase)
        entrypoint = shlex.join([*self.executable, *argv[1:]])
        metadata = {"infoppo_sweep": self.sweep_id, "run": run.name, "phase": phase.name}
        self._submit(job_id, entrypoint, metadata)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(
                log_header(run, phase, argv)
                + phase_log.note(f"Ray job {job_id}; its logs follow when it ends")
            )
        return Handle(run=run, phase=phase, log_path=log_path, job_id=job_id)

    def _submit(self, job_id: str, entrypoint: str, metadata: dict[str, str]) -> None:
        """Submit, retrying while the cluster's job agent is not up yet (a freshly started cluster) or
        the connection drops; a retry that finds the job already there counts as submitted."""
        deadline = time.monotonic() + self.submit_timeout_s
        while True:
            try:
                self._client.submit_job(entrypoint=entrypoint, submission_id=job_id, metadata=metadata)
                return
            except Exception as exc:
                message = str(exc)
                if "already exists" in message:
                    return
                transient = "No available agent" in message or isinstance(
                    exc, OSError
                )  # requests errors are OSErrors
                if not transient or time.monotonic() > deadline:
                    raise EnvironmentProblem(f"Ray refused job {job_id} at {self.address}: {exc}") from None
            time.sleep(1.0)

    def attach(self, run: RunRecord, phase: PhaseRecord, log_path: Path) -> Handle | None:
        if phase.ray_job_id is None:
            refuse_other_launchers_job(run, phase, "ray")
            if phase.pid is not None:
                return None  # started by a local sweep and gone
        job_id = phase.ray_job_id or self.job_id_for(run, phase)
        try:
            self._client.get_job_status(job_id)
        except RuntimeError as exc:
            if "404" in str(exc) or "does not exist" in str(exc):
                return None
            raise EnvironmentProblem(f"cannot query Ray job {job_id} at {self.address}: {exc}") from None
        return Handle(run=run, phase=phase, log_path=log_path, job_id=job_id)

    def poll(self, handle: Handle) -> PhaseResult | None:
        from ray.job_submission import JobStatus  # lazy: only for --launcher ray

        try:
            info = self._client.get_job_info(handle.job_id)
        except Exception as exc:
            self._failures += 1
            if self._failures >= self.max_poll_failures:
                raise EnvironmentProblem(
                    f"lost contact with the Ray cluster at {self.address} ({exc}); its jobs keep running: "
                    "re-run the same sweep command to re-attach"
                ) from None
            return None
        self._failures = 0
        if not info.status.is_terminal():
            return None
        succeeded = info.status == JobStatus.SUCCEEDED
        code = 0 if succeeded else (info.driver_exit_code if info.driver_exit_code not in (None, 0) else 1)
        self._collect_logs(handle, code)
        if succeeded:
            return PhaseResult(exit_code=0)
        # Ray's message goes on with the job's last logs: its first line says what happened.
        first = phase_log.plain((info.message or "").strip().partition("\n")[0])
        return PhaseResult(exit_code=code, note=f"Ray job {info.status.value}: {first}".strip())

    def _collect_logs(self, handle: Handle, exit_code: int) -> None:
        try:
            logs = self._client.get_job_logs(handle.job_id)
        except Exception as exc:
            logs = phase_log.note(f"could not fetch the logs of Ray job {handle.job_id}: {exc}")
        with open(handle.log_path, "a", encoding="utf-8") as log:
            log.write(logs if logs.endswith("\n") or not logs else logs + "\n")
            log.write(phase_log.footer(exit_code))

    def interrupt(self, handle: Handle) -> bool:
        return False  # the job runs on; the next invocation re-attaches to it
