"""The records of ``sweep.json``: a run of the grid (:class:`RunRecord`) and its phases
(:class:`PhaseRecord`), with the run's status derived from theirs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class PhaseRecord:
    """One phase of a run (``train`` or ``eval``), what it runs, and how its last attempt went."""

    name: str
    command: list[str] | None = None
    """An eval phase's command (``infoppo eval ...``)."""
    status: str = "pending"
    exit_code: int | None = None
    started: str | None = None
    finished: str | None = None
    duration_s: float | None = None
    log: str | None = None
    """Log file, relative to the run directory."""
    launched: list[str] | None = None
    """The argv actually started (the request's command line with e.g. ``--resume``)."""
    pid: int | None = None
    ray_job_id: str | None = None
    slurm_job_id: str | None = None
    """The SLURM job of the phase (``--launcher slurm``), to re-attach to after the sweep stopped."""
    note: str | None = None
    request: dict[str, Any] | None = None
    """A train phase's ``infoppo train`` request (``TrainRequest``'s fields, typed); its command line is
    written when it is launched (``launcher.launch_argv``)."""


@dataclass
class RunRecord:
    """One grid point of the sweep."""

    name: str
    kind: str
    value: Any
    value_label: str
    time: str
    method: str
    seed: int
    parameters: dict[str, Any]
    output_dir: str
    phases: list[PhaseRecord]
    status: str = "pending"
    attempts: int = 0
    started: str | None = None
    finished: str | None = None
    duration_s: float | None = None
    error: str | None = None

    def phase(self, name: str) -> PhaseRecord:
        """The phase called ``name`` (``train`` or ``eval``)."""
        return next(phase for phase in self.phases if phase.name == name)

    def next_phase(self) -> PhaseRecord | None:
        """The first phase not yet done, or None when the run is complete."""
        return next((phase for phase in self.phases if phase.status != "done"), None)

    def running_phase(self) -> PhaseRecord | None:
        """The phase in flight, if any."""
        return next((phase for phase in self.phases if phase.status == "running"), None)

    def refresh_status(self) -> None:
        """Derive the run's status from its phases."""
        statuses = [phase.status for phase in self.phases]
        if "failed" in statuses:
            self.status = "failed"
        elif all(status == "done" for status in statuses):
            self.status = "done"
        elif "running" in statuses:
            self.status = "running"
        else:
            self.status = "pending"
