"""Run a sweep's phases: one after another on this machine, or as Ray jobs on a cluster.

The scheduler (:func:`run_sweep`) is the same for both; a *launcher* starts, polls and stops one phase.
:class:`LocalLauncher` runs each command as a child process with its output in ``<run>/<phase>.log``;
:class:`RayJobLauncher` submits it with Ray's job submission API and copies the job's logs there when it
ends. Every state change is saved to ``sweep.json`` before the scheduler moves on, so an interruption
at any point leaves a file that the next invocation resumes from.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.sweep.grid import RAY_JOB_TRAIN_ARGS
from infoppo_cli.sweep.state import PhaseRecord, RunRecord, SweepState, now_iso

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


def launch_argv(run: RunRecord, phase: PhaseRecord, in_ray_job: bool = False) -> list[str]:
    """The phase's command plus what depends on where and when it starts: for train, ``--resume`` when
    the run directory holds a started run (an earlier attempt wrote ``manifest.json``; train refuses
    to overwrite it otherwise), and ``--address auto`` inside a Ray job."""
    argv = list(phase.command)
    if phase.name != "train":
        return argv
    if (Path(run.output_dir) / "manifest.json").exists() and "--resume" not in argv:
        argv.append("--resume")
    if in_ray_job:
        argv += RAY_JOB_TRAIN_ARGS
    return argv


def last_log_line(path: Path, limit: int = 8192) -> str:
    """The last non-empty line of a log file ('' when there is none)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - limit))
            tail = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _log_header(run: RunRecord, phase: PhaseRecord, argv: Sequence[str]) -> str:
    title = f"=== infoppo sweep: {run.name} {phase.name}, attempt {run.attempts}, {now_iso()}"
    return f"{title}\n$ {shlex.join(argv)}\n"


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


# --------------------------------------------------------------------------- local


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
        log_file.write(_log_header(run, phase, argv).encode())
        log_file.flush()
        try:
            # Its own session: Ctrl-C reaches the sweep, which then stops the child deliberately.
            process = subprocess.Popen(
                [*self.executable, *argv[1:]],
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
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
        if phase.ray_job_id is not None:
            raise UsageError(
                f"run {run.name} is Ray job {phase.ray_job_id} of an earlier sweep with --address; "
                f"re-run with that --address to re-attach (or `ray job stop {phase.ray_job_id}` first)"
            )
        _refuse_live_local_process(run, phase)
        return None

    def poll(self, handle: Handle) -> PhaseResult | None:
        assert handle.process is not None
        code = handle.process.poll()
        if code is None:
            return None
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


def _refuse_live_local_process(run: RunRecord, phase: PhaseRecord) -> None:
    if phase.pid is not None and _process_runs_in(phase.pid, run.output_dir):
        raise UsageError(
            f"run {run.name} is still running as process {phase.pid} from an earlier sweep; "
            f"wait for it or stop it (kill {phase.pid}), then re-run"
        )


def _process_runs_in(pid: int, output_dir: str) -> bool:
    """Whether ``pid`` is alive and its command line mentions ``output_dir`` (not a recycled pid)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True  # alive but unreadable: assume it is ours rather than risk two runs in one directory
    return output_dir in cmdline


# --------------------------------------------------------------------------- Ray


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
        from ray.job_submission import JobSubmissionClient

        try:
            return JobSubmissionClient(address)
        except Exception as exc:  # Ray raises ConnectionError, ValueError or RuntimeError here
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EnvironmentProblem(
                f"cannot reach the Ray cluster at {address}: {first} "
                "(--address takes the dashboard address, e.g. http://HEAD_NODE:8265)"
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
            log.write(_log_header(run, phase, argv) + f"(Ray job {job_id}; its logs follow when it ends)\n")
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
        if phase.ray_job_id is None and phase.pid is not None:  # started by a local sweep
            _refuse_live_local_process(run, phase)
            return None
        job_id = phase.ray_job_id or self.job_id_for(run, phase)
        try:
            self._client.get_job_status(job_id)
        except RuntimeError as exc:
            if "404" in str(exc) or "does not exist" in str(exc):
                return None
            raise EnvironmentProblem(f"cannot query Ray job {job_id} at {self.address}: {exc}") from None
        return Handle(run=run, phase=phase, log_path=log_path, job_id=job_id)

    def poll(self, handle: Handle) -> PhaseResult | None:
        from ray.job_submission import JobStatus

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
        self._collect_logs(handle)
        if info.status == JobStatus.SUCCEEDED:
            return PhaseResult(exit_code=0)
        code = info.driver_exit_code if info.driver_exit_code not in (None, 0) else 1
        return PhaseResult(exit_code=code, note=f"Ray job {info.status.value}: {info.message or ''}".strip())

    def _collect_logs(self, handle: Handle) -> None:
        try:
            logs = self._client.get_job_logs(handle.job_id)
        except Exception as exc:
            logs = f"(could not fetch the logs of Ray job {handle.job_id}: {exc})\n"
        with open(handle.log_path, "a", encoding="utf-8") as log:
            log.write(logs if logs.endswith("\n") or not logs else logs + "\n")

    def interrupt(self, handle: Handle) -> bool:
        return False  # the job runs on; the next invocation re-attaches to it


# --------------------------------------------------------------------------- scheduler


class Reporter(Protocol):
    """Hears what the scheduler does (for progress bars and log lines)."""

    def begin(self, total: int, description: str) -> None: ...

    def phase_started(self, run: RunRecord, phase: PhaseRecord, attached: bool) -> None: ...

    def run_finished(self, run: RunRecord, phase: PhaseRecord) -> None: ...

    def end(self) -> None: ...


class SilentReporter:
    """A reporter that reports nothing."""

    def begin(self, total: int, description: str) -> None:
        pass

    def phase_started(self, run: RunRecord, phase: PhaseRecord, attached: bool) -> None:
        pass

    def run_finished(self, run: RunRecord, phase: PhaseRecord) -> None:
        pass

    def end(self) -> None:
        pass


@dataclass
class SweepOutcome:
    """What one invocation of the scheduler achieved."""

    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    left_running: list[str] = field(default_factory=list)
    aborted: str | None = None
    """Why the sweep stopped launching runs early (a rejected command line), if it did."""


def runs_to_execute(state: SweepState, names: Sequence[str]) -> list[RunRecord]:
    """The runs among ``names`` that this invocation works on: running (to re-attach) and pending."""
    chosen = [state.run(name) for name in names]
    return [run for run in chosen if run.status in ("running", "pending")]


def run_sweep(
    state: SweepState,
    names: Sequence[str],
    launcher: Launcher,
    *,
    max_parallel: int = 1,
    poll_interval: float | None = None,
    reporter: Reporter | None = None,
) -> SweepOutcome:
    """Run the pending phases of the runs ``names`` with at most ``max_parallel`` runs at once.

    Running runs are re-attached when the launcher can (Ray) and otherwise marked interrupted and run
    again. On Ctrl-C (or SIGTERM) local children are stopped and put back to pending, Ray jobs are left
    running, ``sweep.json`` is saved, and ``KeyboardInterrupt`` propagates.
    """
    if max_parallel < 1:
        raise UsageError(f"--max-parallel must be >= 1, got {max_parallel}")
    reporter = reporter or SilentReporter()
    outcome = SweepOutcome()
    work = runs_to_execute(state, names)
    active: dict[str, Handle] = {}
    queue: list[RunRecord] = []
    reporter.begin(len(work), launcher.description)
    try:
        with _sigterm_as_interrupt():
            for run in work:
                handle = _reattach(state, run, launcher) if run.status == "running" else None
                if handle is not None:
                    active[run.name] = handle
                    reporter.phase_started(run, handle.phase, attached=True)
                else:
                    queue.append(run)
            while queue or active:
                while queue and len(active) < max_parallel and outcome.aborted is None:
                    run = queue.pop(0)
                    active[run.name] = _start_next(state, run, launcher, reporter, new_attempt=True)
                if not active:
                    break
                if not _poll_active(state, active, launcher, reporter, outcome):
                    time.sleep(poll_interval or launcher.poll_interval)
    except KeyboardInterrupt:
        _interrupt_active(state, active, launcher, outcome)
        raise
    finally:
        reporter.end()
    return outcome


def _reattach(state: SweepState, run: RunRecord, launcher: Launcher) -> Handle | None:
    phase = run.running_phase()
    if phase is None:  # defensive: a hand-edited file
        run.refresh_status()
        state.save()
        return None
    handle = launcher.attach(run, phase, Path(run.output_dir) / f"{phase.name}.log")
    if handle is None:
        state.mark_interrupted(run, phase, "interrupted: it was running when an earlier sweep stopped")
    return handle


def _start_next(
    state: SweepState, run: RunRecord, launcher: Launcher, reporter: Reporter, new_attempt: bool
) -> Handle:
    phase = run.next_phase()
    assert phase is not None, f"{run.name} has nothing left to run"
    argv = launch_argv(run, phase, launcher.in_ray_job)
    log_name = f"{phase.name}.log"
    state.start_phase(run, phase, argv, log_name, new_attempt=new_attempt)
    # A Ray job's id is recorded before it is submitted: if the submission is interrupted, the next
    # sweep finds the job (and attaches) or does not (and runs the phase again), never both.
    job_id = launcher.job_id_for(run, phase)
    state.record_handle(phase, job_id=job_id)
    try:
        handle = launcher.start(run, phase, argv, Path(run.output_dir) / log_name)
    except BaseException:
        if job_id is None:
            state.mark_interrupted(run, phase, "could not be started")
        raise
    try:
        state.record_handle(phase, pid=handle.process.pid if handle.process else None, job_id=handle.job_id)
        reporter.phase_started(run, phase, attached=False)
    except BaseException:  # Ctrl-C right after the start: stop what was started, as run_sweep would
        if launcher.interrupt(handle):
            state.mark_interrupted(run, phase, "interrupted (Ctrl-C or SIGTERM)")
        raise
    return handle


def _poll_active(
    state: SweepState,
    active: dict[str, Handle],
    launcher: Launcher,
    reporter: Reporter,
    outcome: SweepOutcome,
) -> bool:
    """Poll every active phase once; True when at least one finished."""
    progressed = False
    for name, handle in list(active.items()):
        result = launcher.poll(handle)
        if result is None:
            continue
        progressed = True
        run, phase = handle.run, handle.phase
        state.finish_phase(run, phase, result.exit_code, result.note)
        if result.exit_code == USAGE_EXIT_CODE and outcome.aborted is None:
            reason = last_log_line(handle.log_path) or "see its log"
            outcome.aborted = f"{run.name}: {phase.name} stopped with a usage error (exit 2): {reason}"
        if run.status == "pending":  # a phase succeeded and the next one waits
            if outcome.aborted is None:
                active[name] = _start_next(state, run, launcher, reporter, new_attempt=False)
            else:
                del active[name]  # the sweep is stopping; the run resumes with that phase next time
            continue
        del active[name]
        (outcome.done if run.status == "done" else outcome.failed).append(run.name)
        reporter.run_finished(run, phase)
    return progressed


def _interrupt_active(
    state: SweepState, active: dict[str, Handle], launcher: Launcher, outcome: SweepOutcome
) -> None:
    for handle in active.values():
        if launcher.interrupt(handle):
            state.mark_interrupted(handle.run, handle.phase, "interrupted (Ctrl-C or SIGTERM)")
        else:
            outcome.left_running.append(handle.run.name)
    state.save()


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (a batch scheduler's stop) like Ctrl-C while the sweep runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
