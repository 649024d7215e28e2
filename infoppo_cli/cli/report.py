"""``infoppo report``: figures, a final-metrics table and report.md from run and sweep directories."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from infoppo_cli.cli.options import unset_option


def report_command(
    dirs: list[Path] = typer.Argument(
        ...,
        metavar="DIR",
        help="Run directories, eval output directories, sweep directories or folders of runs.",
    ),
    out: Path = unset_option(
        "--out",
        help="Where the figures, tables and report.md go (default: DIR/report for one DIR, else ./report).",
    ),
    formats: str = unset_option(
        "--format",
        help="Figure formats, comma-separated among png (300 dpi), pdf, svg (default: png,pdf,svg).",
    ),
) -> None:
    """Draw the paper's figures (accuracy over steps, length, entropy, rho, Gamma_info, clip bounds; final
    accuracy per grid point), print a table of final metrics and write it as CSV and Markdown, hparams.csv,
    TensorBoard HParams summaries, and report.md embedding every figure with its caption."""
    from infoppo_cli.atomic import check_output_target
    from infoppo_cli.cli.console import console, err_console, progress_bar
    from infoppo_cli.report.core import make_report, parse_formats

    chosen = parse_formats(formats)
    target = out if out is not None else (dirs[0] / "report" if len(dirs) == 1 else Path("report"))
    check_output_target(target, kind="dir", inputs=dirs)
    with progress_bar(transient=True) as progress:
        task = progress.add_task("report", total=None)
        report = make_report(
            dirs, target, chosen, on_step=lambda name: progress.update(task, description=name)
        )
    console.print(final_table(report.columns, report.rows))
    for note in report.notes:
        err_console.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)
    console.print(
        f"wrote {len(report.captions)} figure(s) as {', '.join(chosen)}, {report.report_md.name}, "
        f"{report.table_csv.name}, {report.table_md.name} and {report.hparams_csv.name} to {report.out_dir}",
        highlight=False,
    )


def final_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """The final-metrics table for the terminal (run names never elided)."""
    from rich.table import Table

    from infoppo_cli.report.tables import TABLE_TITLE, cell_text

    table = Table(title=TABLE_TITLE)
    widest_name = max((len(str(row[0])) for row in rows), default=3)
    for column in columns:
        if column == "run":
            table.add_column(column, min_width=widest_name, no_wrap=True)
        else:
            table.add_column(column, justify="left" if column in ("sweep", "arm", "status") else "right")
    for row in rows:
        table.add_row(*(cell_text(value) for value in row))
    return table
