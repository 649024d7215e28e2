"""``infoppo data prep``: build a clean training prompt file (thin layer over ``infoppo_cli.data.dapo``)."""

from __future__ import annotations

from pathlib import Path

import typer

from infoppo_cli.cli.console import console, progress_bar
from infoppo_cli.data.dapo import DATASETS, DEFAULT_OUT, LANGS, prepare_dapo, summary_table
from infoppo_cli.data.templates import TEMPLATES

app = typer.Typer(help="Prepare training data.", no_args_is_help=True)


@app.command("prep")
def prep_command(
    dataset: str = typer.Argument(..., help=f"Dataset to prepare: {', '.join(DATASETS)}."),
    source: str = typer.Option(
        None,
        "--source",
        help="Hugging Face id or local .parquet/.jsonl/.json file.",
        show_default=DATASETS["dapo-math-17k"],
    ),
    out: Path = typer.Option(DEFAULT_OUT, "--out", "-o", help="Output JSONL file (written atomically)."),
    template: str = typer.Option("dapo", "--template", help=f"Prompt template: {', '.join(TEMPLATES)}."),
    lang: str = typer.Option("all", "--lang", help=f"Keep problems in: {', '.join(LANGS)} (zh = has CJK)."),
    limit: int = typer.Option(None, "--limit", help="Stop after writing this many rows.", show_default=False),
    strict: bool = typer.Option(
        False, "--strict", help="Stop at the first malformed row (rows count from 1) instead of skipping it."
    ),
) -> None:
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
        summary = prepare_dapo(
            source=source,
            out=out,
            template=template,
            lang=lang,
            limit=limit,
            strict=strict,
            dataset=dataset,
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
