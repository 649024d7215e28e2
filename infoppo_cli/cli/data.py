"""``infoppo data prep``: build a clean training prompt file (thin layer over ``infoppo_cli.data.dapo``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from infoppo_cli.cli.console import console, progress_bar
from infoppo_cli.cli.options import settings_of, with_settings
from infoppo_cli.data.dapo import DEFAULT_OUT, LANGS, MALFORMED_REASONS, PrepSummary, prepare_dapo
from infoppo_cli.data.sources import DATASETS
from infoppo_cli.data.templates import TEMPLATES
from infoppo_cli.schema import option

app = typer.Typer(help="Prepare training data.", no_args_is_help=True)


DatasetArgument = Annotated[str, typer.Argument(help=f"Dataset to prepare: {', '.join(DATASETS)}.")]


@dataclass
class PrepOptions:
    """``infoppo data prep``'s options."""

    source: str | None = option(
        None, "Hugging Face id or local .parquet/.jsonl/.json file.", default_text=DATASETS["dapo-math-17k"]
    )
    out: Path = option(DEFAULT_OUT, "Output JSONL file, written atomically.", "--out", "-o")
    template: str = option("dapo", f"Prompt template: {', '.join(TEMPLATES)}.")
    lang: str = option("all", f"Keep problems in: {', '.join(LANGS)} (zh = has CJK).")
    limit: int | None = option(None, "Stop after writing this many rows.")
    strict: bool = option(
        False, "Stop at the first malformed row (rows count from 1) instead of skipping it.", "--strict"
    )


@app.command("prep")
@with_settings(PrepOptions)
def prep_command(dataset: DatasetArgument, **options: Any) -> None:
    """Deduplicate DAPO-Math-17K, apply a prompt template and write {id, prompt, label, source, lang} rows."""
    # The bar starts with the first batch, so a bad option or a missing file prints only its error line.
    progress = progress_bar(transient=True)
    task = None

    def advance(done: int, total: int | None) -> None:
        nonlocal task
        if task is None:
            progress.start()
            task = progress.add_task(f"reading {dataset}", total=total)
        progress.update(task, completed=done, total=total)

    try:
        # the options in prepare_dapo's own order: source, out, template, lang, limit, strict, dataset
        asked = settings_of(options, PrepOptions)
        summary = prepare_dapo(
            asked.source,
            asked.out,
            asked.template,
            asked.lang,
            asked.limit,
            asked.strict,
            dataset,
            on_progress=advance,
        )
    finally:
        if task is not None:  # stopping a bar that never started would still print a blank line
            progress.stop()
    console.print(summary_table(summary))
    console.print(f"wrote {summary.written:,} rows to [bold]{summary.out}[/] in {summary.seconds:.1f} s")
    if summary.conflicts_file is not None:
        count = len(summary.conflicts)
        console.print(
            f"[yellow]answer conflicts in {count:,} problem(s):[/] the first answer was kept; "
            f"all are listed in {summary.conflicts_file}"
        )


def summary_table(summary: PrepSummary) -> Table:
    """The summary as a Rich table: rows read, malformed by reason, duplicates, conflicts, written."""
    table = Table(title=f"DAPO-Math-17K prep: {summary.source}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("rows read", f"{summary.rows_read:,}")
    for reason in MALFORMED_REASONS:
        if summary.malformed[reason]:
            table.add_row(f"malformed: {reason}", f"{summary.malformed[reason]:,}")
    if not summary.malformed:
        table.add_row("malformed", "0")
    if summary.unique_source_indices is not None:
        table.add_row("distinct extra_info.index", f"{summary.unique_source_indices:,}")
    table.add_row("duplicates dropped", f"{summary.duplicates:,}")
    table.add_row("unique problems", f"{summary.unique_problems:,}")
    table.add_row(
        "answer conflicts (problems / rows)", f"{len(summary.conflicts):,} / {summary.conflict_rows:,}"
    )
    if summary.untemplated:
        table.add_row("prompts not in DAPO's template (used as is)", f"{summary.untemplated:,}")
    split = ", ".join(f"{lang} {summary.langs[lang]:,}" for lang in ("en", "zh"))
    table.add_row("language split (unique problems)", split)
    if summary.lang != "all":
        table.add_row(f"dropped by --lang {summary.lang}", f"{summary.filtered_by_lang:,}")
    table.add_row(
        "rows written" + (" (stopped at --limit)" if summary.stopped_at_limit else ""), f"{summary.written:,}"
    )
    return table
