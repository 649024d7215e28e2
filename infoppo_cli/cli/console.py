"""The Rich consoles and progress bar every command shares; tables printed on them fit the terminal."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console, Group
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
from rich.table import Table

_COLUMN_EDGES = 3  # one padding space each side and one rule per column
_WRAP_AT = 24  # a split table gives a column this much room at most; longer cells wrap
_SQUEEZE_TO = 12  # Rich may squeeze a column down to this (or its longest header word), no further


def _words_width(text: Any) -> int:
    return max((cell_len(word) for word in str(text).split()), default=0)


def _cell_widths(column: Any) -> tuple[int, int]:
    """(widest line, longest word) over a column's cells."""
    lines = [line for cell in column.cells for line in str(cell).splitlines()]
    return max(map(cell_len, lines), default=0), max(map(_words_width, lines), default=0)


def fit_table(table: Table, width: int) -> Table | Group:
    """``table`` with no header word cut: as is (Rich wraps cells) when its columns can shrink to
    ``width`` keeping every header word whole; else split into tables of consecutive columns, each
    repeating the first (the row's name)."""
    headers = [_words_width(column.header) for column in table.columns]
    widths = [_cell_widths(column) for column in table.columns]
    least = [
        max(header, column.min_width or 0, min(word, _SQUEEZE_TO))
        for header, column, (_, word) in zip(headers, table.columns, widths, strict=True)
    ]
    for column, header in zip(table.columns, headers, strict=True):
        column.min_width = max(column.min_width or 0, header) or None
        if column.overflow == "ellipsis":  # Rich's default would cut a long cell; fold keeps all of it
            column.overflow = "fold"
    if sum(least) + _COLUMN_EDGES * len(least) + 1 <= width or len(least) < 3:
        return table
    needs = [
        max(low, min(max(widest, cell_len(str(column.header))), _WRAP_AT))
        for low, column, (widest, _) in zip(least, table.columns, widths, strict=True)
    ]
    parts: list[list[int]] = [[]]
    used = needs[0] + 2 * _COLUMN_EDGES + 1
    for index in range(1, len(needs)):
        if parts[-1] and used + needs[index] > width:
            parts.append([])
            used = needs[0] + 2 * _COLUMN_EDGES + 1
        parts[-1].append(index)
        used += needs[index] + _COLUMN_EDGES
    return Group(*(_sub_table(table, [0, *part], first=n == 0) for n, part in enumerate(parts)))


def _sub_table(table: Table, indices: list[int], first: bool) -> Table:
    """The columns ``indices`` of ``table`` as a table of their own (each column's settings and cells,
    each row's style and section end kept)."""
    title = table.title if first or table.title is None else f"{table.title} (continued)"
    part = Table(
        *(table.columns[index].copy() for index in indices),  # a column's settings, without its cells
        title=title,
        box=table.box,
        show_header=table.show_header,
        show_lines=table.show_lines,
        header_style=table.header_style,
        title_style=table.title_style,
    )
    cells = zip(*(table.columns[index].cells for index in indices), strict=True)
    for row, values in zip(table.rows, cells, strict=True):
        part.add_row(*values, style=row.style, end_section=row.end_section)
    return part


def _fitted(renderable: Any, width: int) -> Any:
    if isinstance(renderable, Table):
        return fit_table(renderable, width)
    if isinstance(renderable, Group):
        return Group(*(_fitted(item, width) for item in renderable.renderables))
    return renderable


class FittingConsole(Console):
    """A Rich console on which every table fits the terminal's width (see :func:`fit_table`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(_fitted(item, self.width) for item in objects), **kwargs)


console = FittingConsole()
err_console = FittingConsole(stderr=True)


def progress_bar(transient: bool = False) -> Progress:
    """A Rich progress bar (description, bar, done/total, elapsed, remaining) on stderr."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
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
