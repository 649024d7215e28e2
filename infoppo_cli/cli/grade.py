"""``infoppo grade``: show how the grader reads one response, or re-grade a samples file.

A thin layer over :func:`infoppo_cli.grading.explain` and :mod:`infoppo_cli.grading.review`; all the
rendering is here. Text is printed bounded (``review.SHOWN_CHARS``, ``review.JSON_CHARS``) and, in the
terminal, with every control character escaped: a response is untrusted text, and an ANSI escape or a
bidi override (U+202E) in it must not rewrite what the reader sees. JSON is written ASCII-only, so its
escapes are JSON's own.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from infoppo_cli.cli.options import given_fields, with_settings
from infoppo_cli.errors import UsageError
from infoppo_cli.grading.pool import DEFAULT_TIMEOUT, explain_many
from infoppo_cli.schema import check_options, grading_workers_option, option

_RULES = {"box": "last \\boxed{}", "line": "last Answer: line", "phrase": '"final answer is"'}


@dataclass(frozen=True)
class GradeOptions:
    """What ``infoppo grade`` is asked: one RESPONSE against ``--gold``, or a ``--file`` re-graded."""

    response: str | None = None
    """The RESPONSE argument ('-': standard input)."""
    gold: str | None = option(None, "The gold answer to grade RESPONSE against.", default_text="")
    file: Path | None = option(
        None, "Re-grade a samples.jsonl (lines with response and gold) instead.", default_text=""
    )
    only: str | None = option(
        None,
        "With --file, show only these cases: wrong, correct, changed, no_answer, timeout, error.",
        default_text="every case",
    )
    as_json: bool = option(False, "Print JSON for scripts instead of tables.", "--json")
    workers: int | None = grading_workers_option()

    def __post_init__(self) -> None:
        if self.gold is not None and not self.gold.strip():
            raise UsageError("--gold is empty; give the gold answer to grade against")
        check_options(self)  # --workers: eval's limits
        if self.file is not None:
            if self.response is not None or self.gold is not None:
                raise UsageError("give either --file or a RESPONSE with --gold, not both")
            return
        if self.response is None or self.gold is None:
            raise UsageError("give a RESPONSE and its --gold answer, or --file samples.jsonl")
        if self.only is not None:
            raise UsageError("--only applies to --file")


ResponseArgument = Annotated[
    str | None,
    typer.Argument(help="The response to grade ('-' reads it from standard input); use with --gold."),
]


@with_settings(GradeOptions)
def grade_command(response: ResponseArgument = None, **options: Any) -> None:
    """Show how a response is graded: the answer span found, how gold and answer were read, the verdict.

    Exit status, like cmp: 0 if the response is correct, 1 if not (wrong, no answer), 2 for bad input.

    With --file: 0 once every sample is graded.
    """
    asked = GradeOptions(response=response, **given_fields(options, GradeOptions))
    if asked.file is not None:
        _grade_file(asked.file, asked.only, asked.as_json, asked.workers)
        return
    response = sys.stdin.read() if asked.response == "-" else str(asked.response)
    if not _grade_one(response, str(asked.gold), asked.as_json):
        raise typer.Exit(1)


def _grade_one(response: str, gold: str, as_json: bool) -> bool:
    """Print how ``response`` is graded against ``gold``; returns whether it is correct. It is graded in
    a worker process killed at the grading deadline, as every other path grades (math-verify's own
    timeout cannot stop big-integer arithmetic inside one call)."""
    from infoppo_cli.grading.review import bounded

    ((verdict, reading),) = explain_many([(response, gold)], workers=1)
    if as_json:
        read = asdict(reading) if reading is not None else None
        shown, cut = bounded({"verdict": asdict(verdict), "reading": read})
        typer.echo(json.dumps({**shown, "cut": cut}, ensure_ascii=True))
        return verdict.correct
    if reading is None:  # the worker overran the deadline or died: nothing was read
        from infoppo_cli.cli.console import console

        shown = _verdict_text(verdict.correct, verdict.reason)
        console.print(f"verdict: {shown} (grading deadline {DEFAULT_TIMEOUT:g} s)", highlight=False)
        return verdict.correct

    from infoppo_cli.cli.console import console

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    rule = _RULES.get(reading.source or "", "none: no box, Answer: line or 'final answer is'")
    table.add_row("answer span", _plain(reading.span))
    table.add_row("found by", rule)
    table.add_row("gold", f"{_plain(gold)}  →  normalised {_plain(reading.gold_normalised)}")
    table.add_row("", f"math-verify reads {_plain(reading.gold_parsed)}")
    table.add_row("answer", f"normalised {_plain(reading.prediction_normalised)}")
    table.add_row("", f"math-verify reads {_plain(reading.prediction_parsed)}")
    table.add_row("verdict", _verdict_text(verdict.correct, verdict.reason))
    console.print(table)
    return verdict.correct


def _grade_file(path: Path, only: str | None, as_json: bool, workers: int | None) -> None:
    from infoppo_cli.grading.review import ONLY, read_samples, review_samples

    if only is not None and only not in ONLY:
        raise UsageError(f"--only takes one of {', '.join(ONLY)}, not {only!r}")
    rows = read_samples(path)
    if as_json:
        review = review_samples(rows, workers=workers)
        typer.echo(json.dumps(review.to_json(only), ensure_ascii=True))  # lossless for any text
        return
    from infoppo_cli.cli.console import console, progress_bar

    with progress_bar(transient=True) as progress:
        task = progress.add_task("grading", total=len(rows))
        review = review_samples(rows, workers=workers, on_done=lambda n: progress.advance(task, n))
    console.print(_summary(review))
    cases = review.selected(only)
    if cases:
        console.print(_cases_table(cases))
    if review.reasons.get("timeout"):
        console.print(
            f"[bold yellow]warning:[/] {review.reasons['timeout']} response(s) hit the grading deadline "
            "and count as wrong",
            highlight=False,
        )


def _summary(review: Any) -> str:
    total = len(review.cases)
    counts = ", ".join(f"{reason} {count}" for reason, count in review.reasons.items() if count)
    changed = f"; {review.changed} verdict(s) differ from the file" if review.changed else ""
    return f"{total} sample(s): {counts}{changed}"


def _cases_table(cases: list[Any]) -> Any:
    table = Table()
    for column in ("sample", "gold", "answer span", "verdict", "was"):
        table.add_column(column, overflow="fold")
    for case in cases:
        was = "-" if case.stored_reason is None else case.stored_reason
        table.add_row(
            case.where, _plain(case.gold), _plain(case.span), _verdict_text(case.correct, case.reason), was
        )
    return table


def _verdict_text(correct: bool, reason: str) -> str:
    colour = "green" if correct else "red" if reason == "wrong" else "yellow"
    return f"[{colour}]{'correct' if correct else 'incorrect'}[/] ({reason})"


# C0 and C1 controls but line breaks and tabs, the bidi marks, embeddings, overrides and isolates, and
# lone surrogates (from a JSON "\ud800" escape: no terminal can encode one).
_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escaped(character: re.Match[str]) -> str:
    code = ord(character.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _plain(text: str | None) -> str:
    """``text`` shown literally and bounded: at most ``SHOWN_CHARS`` characters (its beginning and end,
    with a note of its full length), control characters as escapes (``\\x1b``, ``\\u202e``), Rich markup
    escaped; ``-`` for none."""
    from infoppo_cli.grading.review import SHOWN_CHARS, cut_text

    if text is None:
        return "-"
    shown = escape(_UNSAFE.sub(_escaped, cut_text(text, SHOWN_CHARS)))
    if len(text) <= SHOWN_CHARS:
        return shown
    return f"{shown} [dim](cut: the first and last {SHOWN_CHARS // 2:,} of {len(text):,} characters)[/]"
