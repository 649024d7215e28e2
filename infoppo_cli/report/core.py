"""``infoppo report``: the paper's figures, a final-metrics table and ``report.md`` from run and sweep
directories.

Figures mirror the paper's: accuracy on AIME24/AIME25 (and any other ``eval_<bench>``) over training
steps from the in-training evaluation, response length, raw entropy, normalised entropy (mean ρ), mean
Γ_info(0,T) on a log axis, the mean upper and lower clip bound, and for sweeps the final accuracy per
grid point (bars at the mean over seeds with a 95% CI and every seed as a point). Curves of one grid
point are the mean over its seeds with a 95% confidence band; colour encodes the value, line style the
arm. A figure nobody has data for is skipped and said so in the notes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.errors import UsageError
from infoppo_cli.report.curves import KIND_SYMBOLS, build_curves, final_accuracy_bars
from infoppo_cli.report.figures import CURVE_FIGURES, FORMATS, FigureSpec, draw_curves, draw_final_bars
from infoppo_cli.report.runs import RunData, read_inputs
from infoppo_cli.report.tables import (
    TABLE_TITLE,
    eval_benches_of,
    hparams_rows,
    markdown_table,
    table_csv,
    table_markdown,
    table_rows,
    write_tensorboard_hparams,
)

TENSORBOARD_DIR = "tensorboard_hparams"


@dataclass
class Report:
    """What :func:`make_report` wrote."""

    out_dir: Path
    figures: list[Path]
    """Every figure file, all formats."""
    table_csv: Path
    table_md: Path
    report_md: Path
    hparams_csv: Path
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str]
    captions: dict[str, str] = field(default_factory=dict)
    """Figure stem -> caption, in drawing order."""


def parse_formats(raw: str | None) -> tuple[str, ...]:
    """``--format png,pdf,svg`` (default: all three); anything else is a :class:`UsageError`."""
    if raw is None:
        return FORMATS
    formats = tuple(dict.fromkeys(part.strip().lower() for part in raw.split(",") if part.strip()))
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if not formats or unknown:
        shown = ", ".join(unknown) if unknown else repr(raw)
        raise UsageError(f"unknown --format {shown}; choose from {', '.join(FORMATS)} (comma-separated)")
    return formats


def _figure_specs(benches: Sequence[str]) -> list[FigureSpec]:
    specs = []
    if benches:
        panels = tuple((f"eval_{bench}", f"{bench} accuracy (%)") for bench in benches)
        caption = "Accuracy over training steps (in-training evaluation), mean over seeds with 95% CI."
        specs.append(FigureSpec("accuracy", "Accuracy", panels, caption))
    return specs + list(CURVE_FIGURES)


def make_report(
    dirs: Sequence[Path],
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    on_step: Callable[[str], None] | None = None,
) -> Report:
    """Read ``dirs``, draw every figure that has data into ``out_dir`` (each in every format) and write
    ``final_metrics.csv``/``.md``, ``hparams.csv``, TensorBoard HParams summaries and ``report.md``.
    ``on_step(description)`` is called per figure."""
    inputs = read_inputs(dirs)
    runs, notes = inputs.runs, list(inputs.notes)
    benches = eval_benches_of(runs)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures: list[Path] = []
    captions: dict[str, str] = {}
    step = on_step or (lambda description: None)

    if not benches:
        notes.append("accuracy figure not drawn: no run has eval_<bench> metrics or eval/metrics.json")
    for spec in _figure_specs(benches):
        step(spec.stem)
        drawn = [(ylabel, build_curves(runs, key)) for key, ylabel in spec.panels]
        if not any(curves for _, curves in drawn):
            notes.append(f"{spec.stem} not drawn: no run logged {', '.join(key for key, _ in spec.panels)}")
            continue
        figures += draw_curves(out_dir / spec.stem, spec.title, drawn, formats, log_y=spec.log_y)
        captions[spec.stem] = spec.caption + _seeds_note(drawn)

    for sweep, kind in inputs.sweep_kinds.items():
        stem = f"final_accuracy_{sweep}"
        step(stem)
        members = [run for run in runs if run.sweep == sweep]
        panels = [(bench, final_accuracy_bars(members, bench)) for bench in benches]
        if not any(bars for _, bars in panels):
            notes.append(f"{stem} not drawn: no run of {sweep} has a final accuracy yet")
            continue
        figures += draw_final_bars(out_dir / stem, kind, panels, formats)
        captions[stem] = (
            f"Final accuracy of the {kind} sweep per {KIND_SYMBOLS.get(kind, kind)} and arm: bars at the "
            "mean over seeds with a 95% CI, one point per seed."
        )

    columns, rows = table_rows(runs, benches)
    report = Report(
        out_dir=out_dir,
        figures=figures,
        table_csv=out_dir / "final_metrics.csv",
        table_md=out_dir / "final_metrics.md",
        report_md=out_dir / "report.md",
        hparams_csv=out_dir / "hparams.csv",
        columns=columns,
        rows=rows,
        notes=notes,
        captions=captions,
    )
    _write_tables(report, runs, benches, formats)
    return report


def _seeds_note(drawn: Sequence[tuple[str, list[Any]]]) -> str:
    seeds = {curve.seeds for _, curves in drawn for curve in curves}
    if seeds == {1}:
        return " One seed per curve (no confidence band)."
    return f" Seeds per curve: {', '.join(map(str, sorted(seeds)))}; shaded: 95% CI of the mean."


def _write_tables(
    report: Report, runs: Sequence[RunData], benches: Sequence[str], formats: Sequence[str]
) -> None:
    if write_tensorboard_hparams(report.out_dir / TENSORBOARD_DIR, runs, benches) == 0:
        report.notes.append(f"{TENSORBOARD_DIR}/ not written: no run has final metrics yet")
    atomic_write_text(report.table_csv, table_csv(report.columns, report.rows))
    atomic_write_text(report.table_md, table_markdown(report.columns, report.rows, report.notes))
    atomic_write_text(report.hparams_csv, table_csv(*hparams_rows(runs, benches)))
    atomic_write_text(report.report_md, report_markdown(report, formats))


def report_markdown(report: Report, formats: Sequence[str]) -> str:
    """``report.md``: every figure with its caption, then the final table and the notes."""
    shown = next((fmt for fmt in ("png", "svg") if fmt in formats), formats[0])
    lines = ["# infoppo report", ""]
    for number, (stem, caption) in enumerate(report.captions.items(), start=1):
        lines += [f"![{stem}]({stem}.{shown})", "", f"*Figure {number}: {caption}*", ""]
    lines += [f"## {TABLE_TITLE}", "", *markdown_table(report.columns, report.rows), ""]
    lines += [f"Also: `{report.table_csv.name}`, `{report.hparams_csv.name}`, `{TENSORBOARD_DIR}/`."]
    if report.notes:
        lines += ["", "## Notes (missing or partial metrics)", "", *(f"- {note}" for note in report.notes)]
    return "\n".join(lines) + "\n"
