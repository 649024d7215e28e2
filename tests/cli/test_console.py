"""Tables fit the terminal: no header is cut to an ellipsis and no cell loses characters."""

from __future__ import annotations

import io

import pytest
from rich.table import Table

from infoppo_cli.cli.console import FittingConsole, fit_table


def wide_table(columns: int) -> Table:
    table = Table(title="final metrics")
    table.add_column("run", no_wrap=True)
    for index in range(columns):
        table.add_column(f"metric_number_{index}", justify="right")
    table.add_column("source")
    for run in range(3):
        table.add_row(
            f"qwen3-4b-infoppo-seed{run}",
            *(f"{run}.{index:04d}" for index in range(columns)),
            "presets/llama-3.2-3b-instruct.toml",
        )
    return table


def rendered(table: Table, width: int) -> str:
    console = FittingConsole(width=width, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


@pytest.mark.parametrize(("columns", "width"), [(2, 120), (6, 120), (18, 120), (18, 80), (6, 60)])
def test_every_header_and_cell_is_shown_whole(columns, width):
    text = rendered(wide_table(columns), width)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    for index in range(columns):
        assert f"metric_number_{index}" in text
        assert all(f"{run}.{index:04d}" in text for run in range(3))
    assert text.count("qwen3-4b-infoppo-seed0") >= 1


def test_a_table_that_fits_stays_one_table():
    text = rendered(wide_table(3), 200)
    assert text.count("final metrics") == 1 and "(continued)" not in text


def test_a_table_too_wide_is_split_repeating_the_row_name():
    text = rendered(wide_table(18), 120)
    assert "(continued)" in text
    assert text.count("qwen3-4b-infoppo-seed1") >= 2


def test_a_split_table_keeps_each_column_and_row_and_leaves_the_table_whole():
    table = wide_table(18)
    table.rows[1].style = "red"
    table.rows[0].end_section = True
    before = [list(column.cells) for column in table.columns]
    parts = fit_table(table, 120).renderables
    assert len(parts) >= 2
    by_header = {column.header: column for column in table.columns}
    for part in parts:
        assert part.columns[0].header == "run" and part.columns[0].no_wrap
        rows = [(row.style, row.end_section) for row in part.rows]
        assert rows == [(None, True), ("red", False), (None, False)]
        for column in part.columns:
            assert list(column.cells) == list(by_header[column.header].cells)
            assert column.justify == by_header[column.header].justify
    shown = [column.header for part in parts for column in part.columns[1:]]
    assert shown == [column.header for column in table.columns[1:]]  # every column once, in order
    assert [list(column.cells) for column in table.columns] == before


def test_a_warning_line_prints_bracketed_text_as_it_is():
    from infoppo_cli.cli.console import say

    out = io.StringIO()
    say("warning", "[openrlhf] extra [bold]x[/bold]", to=FittingConsole(file=out, width=40))
    assert out.getvalue() == "warning: [openrlhf] extra [bold]x[/bold]\n"  # one line, markup not eaten
