"""``infoppo report``: InfoPPO's figures, a final-metrics table and ``report.md`` from run and sweep
directories.

Figures mirror InfoPPO's: accuracy on AIME24/AIME25 (and any other ``eval_<bench>``) over training
steps from the in-training evaluation, response length, raw entropy, normalised entropy (mean ρ), mean
Γ_info(0,T) on a log axis, the mean upper and lower clip bound, and for sweeps the final accuracy per
grid point (bars at the mean over seeds with a 95% CI and every seed as a point). Curves of one grid
point are the mean over its seeds with a 95% confidence band; colour encodes the value, line style the
arm. Evaluations (``infoppo eval`` directories, a run's final eval) outside a sweep get Mean@k per
benchmark and model with its standard error. A figure nobody has data for is skipped and said so in the
notes. Runs that broke (non-finite metrics, or per-step metrics that stop) are named with their step in the
warnings and at the top of ``report.md`` (see :mod:`infoppo_cli.report.health`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import bench_names
from infoppo_cli.report.axis import X_AXES, on_seed_mean_responses_axis
from infoppo_cli.report.bar_figures import ScoreBar, draw_final_bars, draw_mean_at_k
from infoppo_cli.report.contrast_report import (
    CONTRASTS_CAPTION,
    CONTRASTS_STEM,
    CONTRASTS_TITLE,
    contrasts_csv,
    contrasts_markdown,
    draw_contrasts,
)
from infoppo_cli.report.contrasts import ContrastResult, contrast_results, read_contrasts
from infoppo_cli.report.curves import KIND_SYMBOLS, build_curves, final_accuracy_bars
from infoppo_cli.report.figures import BAND_LABEL, CURVE_FIGURES, FORMATS, FigureSpec, draw_curves
from infoppo_cli.report.health import Health, Healths, assess_all, broken_runs_markdown, health_notes
from infoppo_cli.report.labels import label_runs
from infoppo_cli.report.raw_data import data_csv_text, read_report_inputs
from infoppo_cli.report.runs import RunData
from infoppo_cli.report.seed_means import SEED_MEAN_TITLE, seed_mean_csv, seed_mean_rows
from infoppo_cli.report.tables import (
    TABLE_TITLE,
    bench_titles,
    eval_benches_of,
    hparams_rows,
    markdown_table,
    table_csv,
    table_markdown,
    table_rows,
    write_tensorboard_hparams,
)

TENSORBOARD_DIR = "tensorboard_hparams"
MEAN_AT_K_STEM = "mean_at_k"


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
    mean_columns: list[str] = field(default_factory=list)
    mean_rows: list[list[Any]] = field(default_factory=list)
    """The table averaged over seeds, one row per grid point (empty without a sweep)."""
    seed_mean_csv: Path | None = None
    seed_mean_md: Path | None = None
    broken: list[Health] = field(default_factory=list)
    """The runs that broke, for ``report.md``'s first section."""
    data_csv: Path | None = None
    """The raw per-step data, where ``--csv`` asked for it (``report/raw_data.py``)."""
    contrasts: list[ContrastResult] = field(default_factory=list)
    contrasts_md: Path | None = None
    contrasts_csv: Path | None = None


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


def _figure_specs(benches: Sequence[str], titles: str) -> list[FigureSpec]:
    specs = []
    if benches:
        panels = tuple((f"eval_{bench}", f"{bench} accuracy (%)") for bench in benches)
        caption = "Accuracy over training steps (in-training evaluation), mean over seeds."
        specs.append(FigureSpec("accuracy", "Accuracy", panels, caption + titles))
    return specs + list(CURVE_FIGURES)


def make_report(
    dirs: Sequence[Path],
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    on_step: Callable[[str], None] | None = None,
    benches_file: str | Path | None = None,
    x_axis: str = "steps",
    data_csv: Path | None = None,
    contrasts_file: str | Path | None = None,
) -> Report:
    """Read ``dirs``, draw every figure that has data into ``out_dir`` (each in every format) and write
    ``final_metrics.csv``/``.md`` (and ``final_metrics_seed_mean.csv``/``.md`` for sweeps), ``hparams.csv``,
    TensorBoard HParams summaries and ``report.md``. ``on_step(description)`` is called per figure.
    ``benches_file`` adds the user's benchmarks (``--benches-file``) to the registry's: their names count
    as benchmarks and the captions give their titles. A missing or invalid file is a :class:`UsageError`
    before anything is read or written. ``x_axis`` is what the figures over training are drawn against:
    ``steps`` (RL steps) or ``responses`` (responses generated, ``report/axis.py``). ``dirs`` may hold
    CSV files ``data_csv`` wrote; ``data_csv`` writes the raw per-step data of every run read
    (``report/raw_data.py``). ``contrasts_file``: pre-registered contrasts to compute, write
    (``contrasts.md``/``.csv``) and draw (``report/contrasts.py``), read before any input."""
    bench_names(benches_file)  # checks the file before any directory is read
    if x_axis not in X_AXES:
        raise UsageError(f"unknown --x {x_axis!r}; choose one of: {', '.join(X_AXES)}")
    contrasts = read_contrasts(contrasts_file) if contrasts_file is not None else []
    inputs = read_report_inputs(dirs)
    runs = inputs.runs
    label_runs(runs)  # the legends' names: given names, or methods and settings, not directories
    healths = assess_all(runs)  # once per run, for every figure and table
    notes = list(inputs.notes) + [note for health in healths.values() for note in health_notes(health)]
    benches = eval_benches_of(runs, benches_file)
    results = contrast_results(runs, contrasts, benches_file) if contrasts else []
    out_dir.mkdir(parents=True, exist_ok=True)
    if data_csv is not None:
        atomic_write_text(data_csv, data_csv_text(inputs, benches))
    titles = bench_titles(benches, benches_file)
    drawn = _Drawn(out_dir, formats, on_step or (lambda description: None), titles)
    if x_axis == "responses":
        on_axis = on_seed_mean_responses_axis(runs, notes)
        _draw_training_curves(drawn, on_axis, assess_all(on_axis), benches, notes, X_AXES[x_axis])
    else:
        _draw_training_curves(drawn, runs, healths, benches, notes)
    _draw_final_accuracy(drawn, runs, healths, benches, inputs.sweep_kinds, notes)
    _draw_evaluations(drawn, runs, benches)
    if results:
        drawn.on_step(CONTRASTS_STEM)
        drawn.files += draw_contrasts(out_dir, results, formats)
        drawn.captions[CONTRASTS_STEM] = CONTRASTS_CAPTION
    columns, rows = table_rows(runs, benches, healths)
    mean_columns, mean_rows = seed_mean_rows(runs, benches, healths)
    report = Report(
        out_dir=out_dir,
        figures=drawn.files,
        table_csv=out_dir / "final_metrics.csv",
        table_md=out_dir / "final_metrics.md",
        report_md=out_dir / "report.md",
        hparams_csv=out_dir / "hparams.csv",
        columns=columns,
        rows=rows,
        notes=notes,
        captions=drawn.captions,
        mean_columns=mean_columns,
        mean_rows=mean_rows,
        seed_mean_csv=out_dir / "final_metrics_seed_mean.csv" if mean_rows else None,
        seed_mean_md=out_dir / "final_metrics_seed_mean.md" if mean_rows else None,
        broken=[health for health in healths.values() if health.broken],
        data_csv=data_csv,
        contrasts=results,
        contrasts_md=out_dir / "contrasts.md" if results else None,
        contrasts_csv=out_dir / "contrasts.csv" if results else None,
    )
    _write_tables(report, runs, healths, benches, formats)
    return report


@dataclass
class _Drawn:
    """Where figures go and what has been drawn so far."""

    out_dir: Path
    formats: Sequence[str]
    on_step: Callable[[str], None]
    bench_titles: str = ""
    """The captions' sentence naming each benchmark by its title."""
    files: list[Path] = field(default_factory=list)
    captions: dict[str, str] = field(default_factory=dict)


def _draw_training_curves(
    drawn: _Drawn,
    runs: Sequence[RunData],
    healths: Healths,
    benches: Sequence[str],
    notes: list[str],
    xlabel: str = X_AXES["steps"],
) -> None:
    if not any(run.steps for run in runs):
        if not all(run.eval_only for run in runs):  # eval directories have no training steps to draw
            notes.append("no run has training metrics yet: the figures over training steps are not drawn")
        return
    if not benches:
        notes.append("accuracy figure not drawn: no run has eval_<bench> metrics or eval/metrics.json")
    for spec in _figure_specs(benches, drawn.bench_titles):
        drawn.on_step(spec.stem)
        panels = [(ylabel, build_curves(runs, key, healths)) for key, ylabel in spec.panels]
        if not any(curves for _, curves in panels):
            notes.append(f"{spec.stem} not drawn: no run logged {', '.join(key for key, _ in spec.panels)}")
            continue
        drawn.files += draw_curves(
            drawn.out_dir / spec.stem, spec.title, panels, drawn.formats, log_y=spec.log_y, xlabel=xlabel
        )
        notes_of_panels = _seeds_note(panels) + _base_model_note(panels) + _breaks_note(panels)
        drawn.captions[spec.stem] = spec.caption + notes_of_panels + _axis_note(xlabel)


def _axis_note(xlabel: str) -> str:
    if xlabel == X_AXES["steps"]:
        return ""
    return (
        " X axis: the responses generated up to each step (groups that dynamic sampling dropped included), "
        "the mean over a curve's seeds, not training steps."
    )


def _draw_final_accuracy(
    drawn: _Drawn,
    runs: Sequence[RunData],
    healths: Healths,
    benches: Sequence[str],
    sweep_kinds: dict[str, str],
    notes: list[str],
) -> None:
    for sweep, kind in sweep_kinds.items():
        stem = f"final_accuracy_{sweep}"
        drawn.on_step(stem)
        members = [run for run in runs if run.sweep == sweep]
        panels = [(bench, final_accuracy_bars(members, bench, healths)) for bench in benches]
        if not any(bars for _, bars in panels):
            notes.append(f"{stem} not drawn: no run of {sweep} has a final accuracy yet")
            continue
        drawn.files += draw_final_bars(drawn.out_dir / stem, kind, panels, drawn.formats)
        drawn.captions[stem] = (
            (
                f"Final accuracy of the {kind} sweep per {KIND_SYMBOLS.get(kind, kind)} and arm: bars at the "
                "mean over seeds, error bars: 95% t interval over seeds, one point per seed."
            )
            + _nonfinite_bars_note(bar.mean for _, group in panels for bar in group)
            + drawn.bench_titles
        )


def _draw_evaluations(drawn: _Drawn, runs: Sequence[RunData], benches: Sequence[str]) -> None:
    """Mean@k per benchmark and model of the evaluations outside sweeps (sweeps have their own figure)."""
    evaluated = [run for run in runs if run.sweep is None and run.eval_benches]
    bars = [
        ScoreBar(run.label or run.name, bench, score, run.eval_score(bench, "mean@k_se"))
        for bench in benches
        for run in evaluated
        if (score := run.eval_score(bench)) is not None
    ]
    if not bars:
        return
    drawn.on_step(MEAN_AT_K_STEM)
    drawn.files += draw_mean_at_k(drawn.out_dir / MEAN_AT_K_STEM, bars, drawn.formats)
    ks = sorted({str(body.get("k", "?")) for run in evaluated for body in run.eval_benches.values()})
    drawn.captions[MEAN_AT_K_STEM] = (
        f"Mean@k per benchmark (k = {', '.join(ks)} samples per problem, `infoppo eval`), one bar per model; "
        "error bars: ± one standard error (sampling noise)."
        + _nonfinite_bars_note(bar.score for bar in bars)
        + drawn.bench_titles
    )


def _seeds_note(drawn: Sequence[tuple[str, list[Any]]]) -> str:
    seeds = {curve.seeds for _, curves in drawn for curve in curves}
    if seeds == {1}:
        return " One seed per curve (no confidence band)."
    return f" Seeds per curve: {', '.join(map(str, sorted(seeds)))}; {BAND_LABEL}."


def _base_model_note(drawn: Sequence[tuple[str, list[Any]]]) -> str:
    if any(curve.steps and curve.steps[0] == 0 for _, curves in drawn for curve in curves):
        return " Step 0: the base model, evaluated before training."
    return ""


def _breaks_note(drawn: Sequence[tuple[str, list[Any]]]) -> str:
    broken = sorted({curve.label for _, curves in drawn for curve in curves if curve.breaks})
    if not broken:
        return ""
    shown = ", ".join(broken)
    return f" Dotted vertical lines: where a curve turns non-finite (NaN/inf; a run diverged): {shown}."


def _nonfinite_bars_note(values: Iterable[float]) -> str:
    if all(math.isfinite(value) for value in values):
        return ""
    return " A red NaN/inf at the foot of the axis marks a bar whose value is not finite (a diverged run)."


def _write_tables(
    report: Report, runs: Sequence[RunData], healths: Healths, benches: Sequence[str], formats: Sequence[str]
) -> None:
    if write_tensorboard_hparams(report.out_dir / TENSORBOARD_DIR, runs, benches, healths) == 0:
        report.notes.append(f"{TENSORBOARD_DIR}/ not written: no run has final metrics yet")
    atomic_write_text(report.table_csv, table_csv(report.columns, report.rows))
    atomic_write_text(report.table_md, table_markdown(report.columns, report.rows, report.notes))
    if report.seed_mean_csv and report.seed_mean_md:
        atomic_write_text(report.seed_mean_csv, seed_mean_csv(report.mean_columns, report.mean_rows))
        atomic_write_text(report.seed_mean_md, table_markdown(report.mean_columns, report.mean_rows, ()))
    atomic_write_text(report.hparams_csv, table_csv(*hparams_rows(runs, benches, healths)))
    if report.contrasts_md and report.contrasts_csv:
        lines = [f"# {CONTRASTS_TITLE}", "", *contrasts_markdown(report.contrasts)]
        atomic_write_text(report.contrasts_md, "\n".join(lines) + "\n")
        atomic_write_text(report.contrasts_csv, contrasts_csv(report.contrasts))
    atomic_write_text(report.report_md, report_markdown(report, formats))


def report_markdown(report: Report, formats: Sequence[str]) -> str:
    """``report.md``: the runs that broke, every figure with its caption, the tables and the notes."""
    shown = next((fmt for fmt in ("png", "svg") if fmt in formats), formats[0])
    lines = ["# infoppo report", ""]
    if report.broken:
        lines += [
            "## Runs that broke",
            "",
            "Non-finite metrics are shown as they are (NaN/inf), never as an ",
        ]
        lines[-1] += "earlier value; values from before a break carry their step."
        lines += ["", *broken_runs_markdown(report.broken), ""]
    for number, (stem, caption) in enumerate(report.captions.items(), start=1):
        lines += [f"![{stem}]({stem}.{shown})", "", f"*Figure {number}: {caption}*", ""]
    files = [report.table_csv.name, report.hparams_csv.name, f"{TENSORBOARD_DIR}/"]
    if report.contrasts:
        lines += [f"## {CONTRASTS_TITLE}", "", *contrasts_markdown(report.contrasts), ""]
        files.insert(0, "contrasts.csv")
    if report.mean_rows and report.seed_mean_csv:
        lines += [f"## {SEED_MEAN_TITLE}", "", *markdown_table(report.mean_columns, report.mean_rows), ""]
        files.insert(1, report.seed_mean_csv.name)
    lines += [f"## {TABLE_TITLE}", "", *markdown_table(report.columns, report.rows), ""]
    lines += ["Also: " + ", ".join(f"`{name}`" for name in files) + "."]
    if report.notes:
        lines += [
            "",
            "## Notes (missing, partial or broken metrics)",
            "",
            *(f"- {note}" for note in report.notes),
        ]
    return "\n".join(lines) + "\n"
