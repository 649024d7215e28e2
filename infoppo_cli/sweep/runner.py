"""The sweep's scheduler: run the pending phases of a sweep's runs through a launcher (local processes,
Ray jobs or SLURM jobs; see :mod:`infoppo_cli.sweep.launcher`), at most N at once.

Every state change is saved to ``sweep.json`` before the scheduler moves on, so an interruption at any
point leaves a file that the next invocation resumes from.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.launcher import Handle, Launcher, launch_argv
from infoppo_cli.sweep.phase_log import failure_reason
from infoppo_cli.sweep.state import PhaseRecord, RunRecord, SweepState

USAGE_EXIT_CODE = 2
"""infoppo's exit code for rejected options: every other run would be rejected too, so the sweep stops."""


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
        with _stop_signals() as stop:
            for run in work:
                handle = _reattach(state, run, launcher) if run.status == "running" else None
                if handle is not None:
                    active[run.name] = handle
                    reporter.phase_started(run, handle.phase, attached=True)
                else:
                    queue.append(run)
            while queue or active:
                stop.raise_if_requested()
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
        pid = handle.process.pid if handle.process else None
        state.record_handle(phase, pid=pid, job_id=handle.job_id, slurm_job_id=handle.slurm_job_id)
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
        failed = result.exit_code != 0
        reason = failure_reason(handle.log_path, result.note) if failed else result.note
        state.finish_phase(run, phase, result.exit_code, reason)
        if result.exit_code == USAGE_EXIT_CODE and outcome.aborted is None:
            shown = reason or f"see {handle.log_path}"
            outcome.aborted = f"{run.name}: {phase.name} stopped with a usage error (exit 2): {shown}"
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


class _StopRequest:
    """Ctrl-C or SIGTERM (a batch scheduler's stop) while the sweep runs.

    The handler raises ``KeyboardInterrupt`` where the signal lands, as Python's own does. Where that is
    inside a finalizer (a ``weakref.finalize`` or ``__del__`` run by the garbage collector), Python
    prints the exception as "ignored" and carries on, and the sweep would go on waiting for its runs;
    so the request is also kept here, and the scheduler raises it at its next turn."""

    def __init__(self) -> None:
        self.requested = False

    def handle(self, signum: int, frame: object) -> None:
        self.requested = True
        raise KeyboardInterrupt

    def raise_if_requested(self) -> None:
        if self.requested:
            raise KeyboardInterrupt


@contextlib.contextmanager
def _stop_signals() -> Iterator[_StopRequest]:
    """Handle Ctrl-C (unless the shell ignores it) and SIGTERM alike while the sweep runs."""
    stop = _StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    signals = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signals.append(signal.SIGINT)
    previous = {signum: signal.signal(signum, stop.handle) for signum in signals}
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
