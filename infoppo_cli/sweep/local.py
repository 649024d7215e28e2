"""Run a sweep's phases as child processes of the sweep, one after another, output in
``<run>/<phase>.log``."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from infoppo_cli.errors import EnvironmentProblem
from infoppo_cli.openrlhf_adapter.lifeline import start_owned
from infoppo_cli.sweep import phase_log
from infoppo_cli.sweep.launcher import (
    EXECUTABLE_ENV,
    Handle,
    PhaseResult,
    log_header,
    refuse_other_launchers_job,
    resolve_executable,
)
from infoppo_cli.sweep.state import PhaseRecord, RunRecord


class LocalLauncher:
    """Runs each phase as a child process of this one, output appended to the run's log file."""

    description = "locally, one run after another"
    in_ray_job = False
    poll_interval = 0.5

    def __init__(self, executable: Sequence[str] | None = None, grace_s: float = 60.0) -> None:
        self.executable = list(executable) if executable else resolve_executable(remote=False)
        self.grace_s = grace_s

    def job_id_for(self, run: RunRecord, phase: PhaseRecord) -> str | None:
        return None

    def start(self, run: RunRecord, phase: PhaseRecord, argv: list[str], log_path: Path) -> Handle:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_file = open(log_path, "ab")  # noqa: SIM115 - closed by poll() when the process ends
        log_file.write(log_header(run, phase, argv).encode())
        log_file.flush()
        try:
            # Its own session: Ctrl-C reaches the sweep, which then stops the child deliberately;
            # and the child stops when the sweep dies, however it dies (lifeline.py).
            process = start_owned(
                [*self.executable, *argv[1:]],
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            log_file.close()
            program = shlex.join(self.executable)
            raise EnvironmentProblem(
                f"cannot start {program}: {exc} (set {EXECUTABLE_ENV} to the program to run)"
            ) from None
        return Handle(run=run, phase=phase, log_path=log_path, process=process, log_file=log_file)

    def attach(self, run: RunRecord, phase: PhaseRecord, log_path: Path) -> Handle | None:
        """A local process cannot be re-attached; refuse to start a second one while it still runs."""
        refuse_other_launchers_job(run, phase, "local")
        return None

    def poll(self, handle: Handle) -> PhaseResult | None:
        assert handle.process is not None
        code = handle.process.poll()
        if code is None:
            return None
        if handle.log_file is not None and not handle.log_file.closed:
            handle.log_file.write(phase_log.footer(code).encode())
        self._close(handle)
        return PhaseResult(exit_code=code, note=f"killed by signal {-code}" if code < 0 else None)

    def interrupt(self, handle: Handle) -> bool:
        """SIGINT to the child's process group (train stops its Ray workers), then SIGTERM, then SIGKILL."""
        assert handle.process is not None
        pgid = handle.process.pid
        try:
            for sig, wait_s in ((signal.SIGINT, self.grace_s), (signal.SIGTERM, 10.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, sig)
                try:
                    handle.process.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: no more waiting
        if handle.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            handle.process.wait()
        self._close(handle)
        return True

    @staticmethod
    def _close(handle: Handle) -> None:
        if handle.log_file is not None and not handle.log_file.closed:
            handle.log_file.close()
