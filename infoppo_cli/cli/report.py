"""``infoppo report``: figures and a final-metrics table from run and sweep directories."""

from __future__ import annotations

from pathlib import Path

import typer


def report_command(
    dirs: list[Path] = typer.Argument(
        ..., metavar="DIR", help="Run directories, eval output directories or sweep directories."
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="Where the PNGs and final_metrics.csv/.md go (default: DIR/report for one DIR, else ./report).",
        show_default=False,
    ),
) -> None:
    """Draw the paper's figures (accuracy, length, entropy, rho, Gamma_info, clip bounds; final accuracy vs
    the swept value) and print, and save as CSV and Markdown, a table of final metrics."""
    from infoppo_cli.cli.console import console, err_console, progress_bar
    from infoppo_cli.report.core import make_report, rich_table

    target = out if out is not None else (dirs[0] / "report" if len(dirs) == 1 else Path("report"))
    with progress_bar(transient=True) as progress:
        task = progress.add_task("report", total=None)
        report = make_report(dirs, target, on_step=lambda name: progress.update(task, description=name))
    console.print(rich_table(report.columns, report.rows))
    for note in report.notes:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    console.print(
        f"wrote {len(report.figures)} figure(s), {report.table_csv.name} and {report.table_md.name} "
        f"to {report.out_dir}",
        highlight=False,
    )
