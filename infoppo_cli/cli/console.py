"""The Rich consoles and progress bar every command shares; tables printed on them fit the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from infoppo_cli.cli.fit import fit


class FittingConsole(Console):
    """A Rich console on which every table fits the terminal's width (see :mod:`infoppo_cli.cli.fit`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(fit(item, self.width, self) for item in objects), **kwargs)


console = FittingConsole()
err_console = FittingConsole(stderr=True)


def progress_bar(transient: bool = False, console: Console | None = None) -> Progress:
    """A Rich progress bar (description, bar, done/total, elapsed, remaining) on ``console`` (stderr)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console or err_console,
        transient=transient,
    )


class StageProgress:
    """A ``progress(stage, done, total)`` callback that draws one Rich bar per stage, started on the
    first call (nothing is drawn when the work it follows never happens, e.g. a cache hit)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._bar: Progress | None = None
        self._tasks: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = progress_bar()
            self._bar.start()
        if stage not in self._tasks:
            self._tasks[stage] = self._bar.add_task(f"{self.what}: {stage}", total=total)
        self._bar.update(self._tasks[stage], completed=done, total=total)

    def __enter__(self) -> StageProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()


def say(label: str, message: str, to: Console | None = None) -> None:
    """One ``warning:`` or ``note:`` line (on stderr unless ``to``): the label in yellow, the message as
    plain text, so that ``[openrlhf]``-like text in it is not read as Rich markup."""
    (to or err_console).print(f"[yellow]{label}:[/] {escape(message)}", highlight=False, soft_wrap=True)
