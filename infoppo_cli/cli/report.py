"""``infoppo report``: figures, a final-metrics table and report.md from run and sweep directories (or the
CSV of raw per-step data ``--csv`` writes), and pre-registered paired contrasts (``--contrasts``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from infoppo_cli.atomic import check_output_target
from infoppo_cli.cli.options import settings_of, with_settings
from infoppo_cli.schema import benches_file_option, option

DirsArgument = Annotated[
    list[Path],
    typer.Argument(
        metavar="INPUT",
        help="Run directories, eval output directories, sweep directories or folders of runs, and CSV files "
        "of raw per-step data written by --csv.",
    ),
]


@dataclass
class ReportOptions:
    """``infoppo report``'s options."""

    out: Path | None = option(
        None,
        "Where the figures, tables and report.md go (default: DIR/report for one DIR, else ./report).",
        "--out",
        "-o",
    )
    formats: str | None = option(
        None,
        "Figure formats, comma-separated among png (300 dpi), pdf, svg (default: png,pdf,svg).",
        "--format",
    )
    benches_file: str | None = benches_file_option()
    x_axis: str = option(
        "steps",
        "What the figures over training are drawn against: steps (RL steps) or responses (responses "
        "generated, dropped groups included: methods that generate more per step, as DAPO, on one "
        "compute axis).",
        "--x",
    )
    data_csv: Path | None = option(
        None,
        "Also write the raw per-step data behind the report to FILE (one row per run per step; the "
        "commit and command that made the runs in # lines); FILE can be given back as an INPUT.",
        "--csv",
        metavar="FILE",
    )
    contrasts_file: Path | None = option(
        None,
        "Pre-registered paired contrasts (its contrasts tables: name, arms a and b, optional bench): "
        "per-seed differences a - b of the last eval, the mean of the last 3 and the area under the "
        "accuracy curve, with 95% t intervals; writes contrasts.md, contrasts.csv and a forest plot.",
        "--contrasts",
        metavar="FILE.toml",
    )


@with_settings(ReportOptions)
def report_command(dirs: DirsArgument, **options: Any) -> None:
    """Draw InfoPPO's figures (accuracy over steps, length, entropy, rho, Gamma_info, clip bounds; final
    accuracy per grid point), print a table of final metrics and write it as CSV and Markdown, hparams.csv,
    TensorBoard HParams summaries, and report.md embedding every figure with its caption."""
    from infoppo_cli.cli.console import console, progress_bar, say
    from infoppo_cli.report.contrast_report import CONTRASTS_TITLE, difference_rows
    from infoppo_cli.report.core import make_report, parse_formats
    from infoppo_cli.report.raw_data import check_inputs, is_data_csv

    asked = settings_of(options, ReportOptions)
    out, benches_file, x_axis = asked.out, asked.benches_file, asked.x_axis
    data_csv, contrasts_file = asked.data_csv, asked.contrasts_file
    chosen = parse_formats(asked.formats)
    check_inputs(dirs)  # before the default --out, DIR/report, is checked
    one_dir = len(dirs) == 1 and not is_data_csv(dirs[0])
    target = out if out is not None else (dirs[0] / "report" if one_dir else Path("report"))
    check_output_target(target, kind="dir", inputs=dirs)
    if data_csv is not None:
        check_output_target(data_csv, kind="file", inputs=dirs, option="--csv")
    with progress_bar(transient=True) as progress:
        task = progress.add_task("report", total=None)
        report = make_report(
            dirs,
            target,
            chosen,
            on_step=lambda name: progress.update(task, description=name),
            benches_file=benches_file,
            x_axis=x_axis,
            data_csv=data_csv,
            contrasts_file=contrasts_file,
        )
    if report.mean_rows:
        console.print(seed_mean_table(report.mean_columns, report.mean_rows))
    console.print(final_table(report.columns, report.rows))
    if report.contrasts:
        console.print(final_table(*difference_rows(report.contrasts), title=CONTRASTS_TITLE))
    for note in report.notes:
        say("warning", note)
    tables = [report.table_csv.name, report.table_md.name, report.hparams_csv.name]
    if report.seed_mean_csv is not None:
        tables.insert(2, report.seed_mean_csv.name)
    if report.contrasts_md and report.contrasts_csv:
        tables[:0] = [report.contrasts_md.name, report.contrasts_csv.name]
    console.print(
        f"wrote {len(report.captions)} figure(s) as {', '.join(chosen)}, {report.report_md.name}, "
        f"{', '.join(tables[:-1])} and {tables[-1]} to {report.out_dir}",
        highlight=False,
    )
    if report.data_csv is not None:
        console.print(f"wrote the raw per-step data to {report.data_csv}", highlight=False)


_TEXT_COLUMNS = ("model", "method", "sweep", "value", "arm", "status", "accuracy_from", "weights", "contrast")


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
