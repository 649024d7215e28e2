"""Tables that fit the terminal: a table is printed as a table when every column gets room for its longest
word (and a readable share of its text), else folded into ``key: value`` rows; never split into
"(continued)" tables, never with a word or a header cut.

A folded table is its title, then per row the row's name (its first cell) in bold and one indented
``column: value`` line per other column (an empty cell left out); a table without a header folds into
``first cell: the rest`` lines. Either form keeps every character of every cell.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from rich.console import Console, Group
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Column, Table
from rich.text import Text

READABLE = 16
"""A wrapping column is given at least this much room (or its widest cell, if narrower); a table that
cannot give every column that much is folded."""
FOLD_INDENT = 2
KEY_SHARE = 1 / 3
"""A folded row's key takes at most this share of the width (a longer one wraps between its words)."""


def _measure(console: Console, cell: Any) -> tuple[int, int]:
    """(longest word, widest line) of one cell, as Rich draws it (markup read, not counted)."""
    if cell is None or cell == "":
        return 0, 0
    measured = Measurement.get(console, console.options, cell)
    return measured.minimum, measured.maximum


def _column_range(console: Console, table: Table, column: Column) -> tuple[int, int]:
    """The least room ``column`` may get (its longest word, header words included; a wrapping cell's
    :data:`READABLE` share) and the room its widest line takes. A header may wrap between its words."""
    if column.width is not None:
        return column.width, column.width
    cells = [*column.cells, *([column.footer] if table.show_footer else [])]
    sizes = [_measure(console, cell) for cell in cells]
    word, widest = max((s[0] for s in sizes), default=0), max((s[1] for s in sizes), default=0)
    low = widest if column.no_wrap else max(word, min(widest, READABLE))
    if table.show_header:
        header_word, header = _measure(console, column.header)
        low, widest = max(low, header if column.no_wrap else header_word), max(widest, header)
    low = max(low, column.min_width or 0)
    return low, max(low, widest)


def _frame_width(table: Table) -> int:
    """What a table takes beside its cells: its rules and each column's padding."""
    count = len(table.columns)
    rules = (2 if table.box and table.show_edge else 0) + (count - 1 if table.box else 0)
    _, right, _, left = table.padding
    padding = 0
    for index in range(count):
        first_left = left if table.pad_edge or index else 0
        last_right = right if table.pad_edge or index < count - 1 else 0
        if table.collapse_padding and index:
            first_left = max(0, first_left - right)
        padding += first_left + last_right
    return rules + padding


def _capped(lows: list[int], highs: list[int], room: int) -> list[int]:
    """Column widths within ``room``: each its widest line, the widest cut down to a common cap, none
    below its low."""

    def total(cap: int) -> int:
        return sum(max(low, min(high, cap)) for low, high in zip(lows, highs, strict=True))

    cap_low, cap_high = 0, max(highs, default=0)
    while cap_low < cap_high:  # the largest cap whose total fits
        middle = (cap_low + cap_high + 1) // 2
        cap_low, cap_high = (middle, cap_high) if total(middle) <= room else (cap_low, middle - 1)
    return [max(low, min(high, cap_low)) for low, high in zip(lows, highs, strict=True)]


def fit_table(table: Table, width: int, console: Console | None = None) -> Any:
    """``table`` as it is when it fits ``width``; with its widest columns wrapped (at spaces) when they
    can each keep :data:`READABLE` columns and their longest word; else :func:`folded`. The table given is
    left as it is."""
    if not table.columns:
        return table
    console = console or Console(width=width)
    ranges = [_column_range(console, table, column) for column in table.columns]
    lows, highs = [low for low, _ in ranges], [high for _, high in ranges]
    room = width - _frame_width(table)
    if sum(highs) <= room:
        return table
    if sum(lows) > room:
        return folded(table, width)
    fitted = copy.copy(table)
    fitted.columns = [
        column if size >= high else replace(column, width=size, overflow="fold")
        for column, size, high in zip(table.columns, _capped(lows, highs, room), highs, strict=True)
    ]
    return fitted


def _text(value: Any, style: str) -> Text:
    """A cell, title or caption as a new :class:`Text` in ``style`` (markup read; a Text copied)."""
    if isinstance(value, Text):
        text = value.copy()
        text.stylize(style)
        return text
    return Text.from_markup(str(value), style=style) if value is not None else Text("")


def _header(column: Column) -> str:
    header = column.header
    return header.plain if isinstance(header, Text) else str(header or "")


def _blank(cell: Any) -> bool:
    return cell is None or (isinstance(cell, str | Text) and not str(cell).strip())


def folded(table: Table, width: int | None = None) -> Group:
    """``table`` as ``key: value`` rows (see the module); within ``width`` a key longer than
    :data:`KEY_SHARE` of it wraps, so that its value keeps the room."""
    parts: list[Any] = []
    if table.title:
        parts.append(_text(table.title, str(table.title_style or "table.title")))
    cells = [list(column.cells) for column in table.columns]
    key_width = max(FOLD_INDENT + 8, int(width * KEY_SHARE)) if width else None
    grid = _grid(key_width)
    for index, row in enumerate(table.rows):
        values = [column_cells[index] for column_cells in cells]
        style = row.style or ""
        if not table.show_header:  # already key and value: the first cell names the rest
            key = _text(values[0], str(table.columns[0].style or ""))
            grid.add_row(key.append(":") if key.plain else key, *values[1:], style=style)
            continue
        if grid.rows:
            parts.append(Padding(grid, (0, 0, 0, FOLD_INDENT)))
            grid = _grid(key_width)
        parts.append(_text(values[0], f"bold {table.columns[0].style or ''} {style}".strip()))
        for column, value in zip(table.columns[1:], values[1:], strict=True):
            if not _blank(value):
                grid.add_row(Text(f"{_header(column)}:"), value, style=style)
    if grid.rows:
        parts.append(Padding(grid, (0, 0, 0, FOLD_INDENT if table.show_header else 0)))
    if table.caption:
        parts.append(_text(table.caption, str(table.caption_style or "table.caption")))
    return Group(*parts)


def _grid(key_width: int | None) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(max_width=key_width, overflow="fold")
    grid.add_column(overflow="fold")
    return grid


def fit(renderable: Any, width: int, console: Console | None = None) -> Any:
    """:func:`fit_table` on a table and on every table in a :class:`Group`; a folded table in a group is
    set off from what follows it by an empty line."""
    if isinstance(renderable, Table):
        return fit_table(renderable, width, console)
    if isinstance(renderable, Group):
        spaced: list[Any] = []
        after_fold = False
        for item in renderable.renderables:
            if after_fold:
                spaced.append(Text(""))
            shown = fit(item, width, console)
            spaced.append(shown)
            after_fold = isinstance(item, Table) and isinstance(shown, Group)
        return Group(*spaced)
    return renderable
