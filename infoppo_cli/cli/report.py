"""``infoppo report``: figures, a final-metrics table and report.md from run and sweep directories."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from infoppo_cli.atomic import check_output_target
from infoppo_cli.cli.options import BenchesFileOption, output_option

DirsArgument = Annotated[
    list[Path],
    typer.Argument(
        metavar="DIR", help="Run directories, eval output directories, sweep directories or folders of runs."
    ),
]
ReportOutOption = output_option(
    "Where the figures, tables and report.md go (default: DIR/report for one DIR, else ./report)."
)
FormatsOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="Figure formats, comma-separated among png (300 dpi), pdf, svg (default: png,pdf,svg).",
        show_default=False,
    ),
]
XAxisOption = Annotated[
    str,
    typer.Option(
        "--x",
        help="What the figures over training are drawn against: steps (RL steps) or responses (responses "
        "generated, dropped groups included: methods that generate more per step, as DAPO, on one "
        "compute axis).",
    ),
]


def report_command(
    dirs: DirsArgument,
    out: ReportOutOption = None,
    formats: FormatsOption = None,
    benches_file: BenchesFileOption = None,
    x_axis: XAxisOption = "steps",
) -> None:
    """Draw InfoPPO's figures (accuracy over steps, length, entropy, rho, Gamma_info, clip bounds; final
    accuracy per grid point), print a table of final metrics and write it as CSV and Markdown, hparams.csv,
    TensorBoard HParams summaries, and report.md embedding every figure with its caption."""
    from infoppo_cli.cli.console import console, progress_bar, say
    from infoppo_cli.report.core import make_report, parse_formats
    from infoppo_cli.report.runs import check_dirs

    chosen = parse_formats(formats)
    check_dirs(dirs)  # before the default --out, DIR/report, is checked
    target = out if out is not None else (dirs[0] / "report" if len(dirs) == 1 else Path("report"))
    check_output_target(target, kind="dir", inputs=dirs)
    with progress_bar(transient=True) as progress:
        task = progress.add_task("report", total=None)
        report = make_report(
            dirs,
            target,
            chosen,
            on_step=lambda name: progress.update(task, description=name),
            benches_file=benches_file,
            x_axis=x_axis,
        )
    if report.mean_rows:
        console.print(seed_mean_table(report.mean_columns, report.mean_rows))
    console.print(final_table(report.columns, report.rows))
    for note in report.notes:
        say("warning", note)
    tables = [report.table_csv.name, report.table_md.name, report.hparams_csv.name]
    if report.seed_mean_csv is not None:
        tables.insert(2, report.seed_mean_csv.name)
    console.print(
        f"wrote {len(report.captions)} figure(s) as {', '.join(chosen)}, {report.report_md.name}, "
        f"{', '.join(tables[:-1])} and {tables[-1]} to {report.out_dir}",
        highlight=False,
    )


_TEXT_COLUMNS = ("model", "method", "sweep", "value", "arm", "status", "accuracy_from", "weights")


def final_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> Any:
    """A report table for the terminal (run names never elided; NaN and marked values as in report.md)."""
    from infoppo_cli.report.tables import TABLE_TITLE, cell_text

    table = Table(title=title or TABLE_TITLE)
    widest_name = max((len(str(row[0])) for row in rows), default=3)
    for column in columns:
        if column == "run":
            table.add_column(column, min_width=widest_name, no_wrap=True)
        else:
            table.add_column(column, justify="left" if column in _TEXT_COLUMNS else "right")
    for row in rows:
        table.add_row(*(Text(cell_text(value)) for value in row))  # text, never Rich markup
    return table


def seed_mean_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """The final metrics averaged over seeds, one row per grid point (mean ± 95% CI, n seeds)."""
    from infoppo_cli.report.seed_means import SEED_MEAN_TITLE

    return final_table(columns, rows, SEED_MEAN_TITLE)
