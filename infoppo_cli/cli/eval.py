"""``infoppo eval``: sample, grade and report mean@k on the math benchmarks (thin layer over
``infoppo_cli.eval``). The options are ``EvalSettings``' fields (declared once, in
``infoppo_cli/eval/settings.py``) plus ``--out``, ``--resume`` and ``--list-benches``; all rendering
(tables, progress bars, notes) is here."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from infoppo_cli.atomic import check_output_target
from infoppo_cli.cli.options import settings_of, with_settings
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.newest_run import ModelChoice, choose_model
from infoppo_cli.eval.settings import EvalCommandOptions, EvalSettings, default_out_dir, resolve_settings
from infoppo_cli.rundir import EVAL_METRICS_FILE as METRICS_FILE


@with_settings(EvalSettings, EvalCommandOptions)
def eval_command(**options: Any) -> None:
    """Evaluate a model on the math benchmarks: mean@k (InfoPPO's Score), its SE, pass@k, maj@k, length."""
    from infoppo_cli.cli.console import console

    command = settings_of(options, EvalCommandOptions)
    out, resume, dry_run = command.out, command.resume, command.dry_run
    options = {name: value for name, value in options.items() if name not in asdict(command)}
    if command.list_benches:
        console.print(bench_table(options["benches_file"]))
        return

    from infoppo_cli.eval.outdir import check_out_dir
    from infoppo_cli.eval.run import run_evaluation

    choice = None
    if options["model"] is None and options["responses"] is None and not (resume and out is not None):
        choice = choose_model()  # no --model: the newest run's final/ (a resumed --out has its own)
        if choice.chosen is None and not dry_run:
            raise UsageError(str(choice.problem))
        options = {**options, "model": str(choice.chosen.path) if choice.chosen else None}
    if out is None:
        out = default_out_dir(options["model"], options["responses"])
    inputs = [options["responses"], options["benches_file"]]
    check_output_target(out, kind="dir", inputs=inputs)
    settings = resolve_settings(options, out, resume)
    if dry_run:
        _print_preview(settings, out, choice)
        return
    if choice is not None:
        from infoppo_cli.cli.console import say

        say("note", choice.note())
    check_out_dir(out, settings)
    show_library_messages()
    with _progress() as progress:
        metrics = run_evaluation(settings, out, progress)
    print_report(metrics, out)


# --------------------------------------------------------------------------- rendering


def _print_preview(settings: EvalSettings, out: Path, choice: ModelChoice | None = None) -> None:
    """``--dry-run``: the evaluation as planned, then each problem as an ``error:`` line (exit 2)."""
    from infoppo_cli.cli.console import console
    from infoppo_cli.cli.problems import exit_on_problems
    from infoppo_cli.eval.preview import eval_preview

    preview = eval_preview(settings, out, choice)
    table = Table(title="infoppo eval (dry run: nothing is generated)", show_header=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    for name, value in preview.rows:
        table.add_row(name, value)
    console.print(table)
    exit_on_problems(preview.problems)


class _RichHandler(logging.Handler):
    """The library's notes and warnings as plain lines on stderr (``warning: ...`` in yellow)."""

    def emit(self, record: logging.LogRecord) -> None:
        from infoppo_cli.cli.console import err_console

        prefix = "[bold yellow]warning:[/] " if record.levelno >= logging.WARNING else ""
        err_console.print(prefix + escape(record.getMessage()), highlight=False, soft_wrap=True)


def show_library_messages() -> None:
    """Route ``infoppo_cli``'s log records (notes and warnings of the library) to the terminal, once."""
    logger = logging.getLogger("infoppo_cli")
    if not any(isinstance(handler, _RichHandler) for handler in logger.handlers):
        logger.addHandler(_RichHandler())
    logger.setLevel(logging.INFO)


class _progress:
    """A Rich progress bar exposed as the library's ``progress(name, total) -> advance`` callback."""

    def __enter__(self) -> Callable[[str, int], Callable[[int], None]]:
        from infoppo_cli.cli.console import progress_bar

        self.bar = progress_bar()
        self.bar.__enter__()

        def progress(name: str, total: int) -> Callable[[int], None]:
            task = self.bar.add_task(name, total=total)
            return lambda n: self.bar.advance(task, n)

        return progress

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)


def bench_table(benches_file: str | None = None) -> Any:
    """The benchmark registry as a Rich table (``infoppo benches`` and ``infoppo eval --list-benches``)."""
    from infoppo_cli.eval.benchmarks import DEFAULT_BENCHES, load_registry

    title = "Benchmarks (evaluation/benchmarks.toml" + (f" and {benches_file})" if benches_file else ")")
    table = Table(title=title, show_lines=False, caption=LOCAL_FILES_NOTE, caption_justify="left")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("problems", justify="right")
    table.add_column("Hugging Face source", overflow="fold")
    table.add_column("split")
    table.add_column("answers")
    table.add_column("licence")
    for spec in load_registry(benches_file).values():
        source = spec.hf_id + (f" [{', '.join(spec.configs)}]" if spec.configs else "")
        name = spec.name + ("" if spec.name in DEFAULT_BENCHES else " *")
        table.add_row(name, str(spec.size), source, spec.split, spec.answer_format, spec.license)
    return table


LOCAL_FILES_NOTE = (
    "* not in the default selection (ask for it by name, or --bench all).\n"
    "A local copy: --bench aime24=aime24.jsonl reads the file instead of the Hub (jsonl, parquet, csv or "
    "json; columns problem/question, answer, id found by name). A benchmark of your own: "
    "--bench mine=problems.jsonl, or \\[mine] tables in a TOML file of this registry's format passed as "
    "--benches-file FILE.toml. All work for eval --bench, train --eval-bench and sweep --final-eval-bench, "
    "several in one call."
)


def _fmt(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def render_table(metrics: Mapping[str, Any]) -> Any:
    """A Rich table shaped as InfoPPO's results tables (Score and Len. per bench, then the Average row)."""
    k = metrics["average"]["k"]
    table = Table(title=f"mean@{k} (score, %) and mean response length (tokens)")
    rows = [*metrics["benches"].items(), ("Average", metrics["average"])]
    timeouts = any(row.get("timeouts") for _, row in rows)  # a column only when grading hit its deadline
    columns = ("Bench", "Score", "± SE", "Len.", f"pass@{k}", f"maj@{k}", "Trunc.", "No ans.")
    columns = (*columns, *(["Timeouts"] if timeouts else []), "Problems")
    for column in columns:
        table.add_column(column, justify="left" if column == "Bench" else "right")
    for index, (name, row) in enumerate(rows):
        table.add_row(
            name,
            _fmt(row["mean@k"]),
            _fmt(row["mean@k_se"]),
            _fmt(row["length_mean"], 0),
            _fmt(row["pass@k"]),
            _fmt(row["maj@k"]),
            _percent(row["truncation_rate"]),
            _percent(row["no_answer_rate"]),
            *([str(row.get("timeouts", "-"))] if timeouts else []),
            str(row["problems"]),
            style="bold" if index == len(rows) - 1 else None,
            end_section=index == len(rows) - 2,
        )
    return table


def print_report(metrics: Mapping[str, Any], out_dir: Path) -> None:
    """Print the results table and where the files are."""
    from infoppo_cli.cli.console import console
    from infoppo_cli.eval.sample_store import SAMPLES_FILE

    console.print(render_table(metrics))
    timeouts = metrics["average"].get("timeouts") or 0
    if timeouts:
        console.print(
            f"[bold yellow]warning:[/] grading hit its deadline on {timeouts} response(s), scored as wrong; "
            "`infoppo grade --file samples.jsonl --only timeout` lists them",
            highlight=False,
        )
    console.print(
        f"samples: {Path(out_dir) / SAMPLES_FILE}   metrics: {Path(out_dir) / METRICS_FILE}   "
        f"details: {Path(out_dir) / 'details'}",
        highlight=False,
    )
