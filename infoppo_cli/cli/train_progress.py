"""What ``infoppo train`` shows while the run trains: its per-step and per-eval lines, the lines meant
for the user, and (on a terminal) a progress bar for the phase in flight with its time left.

The lines and the run's time left come from ``train/output.py`` and ``train/progress.py``; this is
only their terminal (``--verbose``: every line of the run's output too).
"""

from __future__ import annotations

from typing import Any

from rich.progress import Progress, TaskID

from infoppo_cli.cli.console import console, progress_bar
from infoppo_cli.train.progress import duration_text

STARTING = "starting Ray and loading the models"


def phase_description(event: dict[str, Any], steps: int | None, left: float | None) -> str:
    """The bar's text for a phase event: ``step 2/40: generating (prompts)  run ~42m left``."""
    step, phase = event.get("step"), event.get("phase")
    of = f"/{steps}" if steps else ""
    if phase == "eval":
        text = (
            "evaluating the base model (prompts)" if step == 0 else f"step {step}{of}: evaluating (prompts)"
        )
    elif phase == "train":
        text = f"step {step}{of}: training"
    else:
        text = f"step {step}{of}: generating (prompts)"
    return f"{text}  run ~{duration_text(left)} left" if left else text


def between(event: dict[str, Any], steps: int | None) -> str:
    """The bar's text after a step, an eval or the start, until the next phase begins."""
    step, kind = event.get("step"), event.get("event")
    if kind == "eval":
        return "after the base model's eval" if step == 0 else f"after the eval at step {step}"
    if kind == "step":
        return f"after step {step}/{steps}: checkpoint" if steps else f"after step {step}: checkpoint"
    return "trainer ready"


class TrainDisplay:
    """A :class:`~infoppo_cli.train.output.Watcher` on the terminal."""

    def __init__(self, steps: int | None = None) -> None:
        self.steps = steps
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._phase: tuple[Any, Any] | None = None
        if console.is_terminal:  # a log file or a pipe gets the lines only
            self._bar = progress_bar(transient=True, console=console)

    def __enter__(self) -> TrainDisplay:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task(STARTING, total=None)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _print(self, line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    def event(self, event: dict[str, Any], line: str | None, left: float | None) -> None:
        if event.get("steps"):
            self.steps = event["steps"]
        if line:
            self._print(line)
        if self._bar is None or self._task is None:
            return
        if event.get("event") == "phase":
            key = (event.get("phase"), event.get("step"))
            description = phase_description(event, self.steps, left)
            if key != self._phase:  # a new phase: its own elapsed time and speed
                self._phase = key
                self._restart(description, event.get("total"))
            self._bar.update(self._task, completed=event.get("done") or 0, description=description)
        else:  # between phases (a checkpoint, the next step's start)
            self._phase = None
            self._restart(between(event, self.steps), None)

    def _restart(self, description: str, total: int | None) -> None:
        """A fresh task (Rich keeps a task's total once set: ``None`` there means "unchanged")."""
        assert self._bar is not None and self._task is not None
        self._bar.remove_task(self._task)
        self._task = self._bar.add_task(description, total=total)

    def output(self, line: str) -> None:
        self._print(line)
