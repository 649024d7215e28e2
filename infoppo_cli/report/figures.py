"""The report's figures, drawn for a paper: matplotlib's non-interactive backends, one file per format.

Sizes and fonts follow a two-column paper: a panel is 3.3 in wide (one column of the ICML/NeurIPS
templates) with 8 pt text, so a figure printed at column width needs no scaling; PNG at 300 dpi (the
usual minimum for print), PDF and SVG vector with their text kept as text (TrueType in PDF, which
conference checkers require instead of Type 3; plain text in SVG). Every figure has one legend, below
its panels, in as many columns as the figure's width holds (long labels wrapped, the figure taller by its
extra rows), so no legend is cut off; curves are the mean over seeds with a 95% t band (see
:mod:`infoppo_cli.report.curves`; the legend names it), broken where their values turn non-finite.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from infoppo_cli.atomic import atomic_writer
from infoppo_cli.report.curves import Curve
from infoppo_cli.report.ticks import set_plain_log_ticks, set_step_ticks

PANEL_INCHES = (3.3, 2.4)
"""One panel: a column of a two-column paper wide; a figure of n panels is n panels wide."""
DPI = 300
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
LINE_STYLES = ("-", "--", ":", "-.")
"""Line style by arm, in the order the arms first appear (info solid, token dashed in a γ/λ sweep)."""
LEGEND_COLUMNS = 4
LEGEND_WIDTH_SHARE = 0.98
"""How much of the figure's width a legend may take."""
WRAP_WIDTHS = (40, 28, 18, 10)
"""Characters per line tried, in turn, for labels too long for a one-column legend."""
BREAK_LABEL = "non-finite from here (run diverged)"
BAND_LABEL = "shaded: 95% t interval over seeds"
"""What a curve's band is, in its figure's legend and caption (:func:`curves.mean_ci`)."""

PAPER_RC: dict[str, Any] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "figure.titlesize": 9,
    "lines.linewidth": 1.2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "none",
}


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its file stem, title and panels (metrics.jsonl key, y label); ``log_y`` for metrics
    that span decades (Γ_info decays geometrically in information time)."""

    stem: str
    title: str
    panels: tuple[tuple[str, str], ...]
    caption: str
    log_y: bool = False


CURVE_FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "response_length",
        "Response length",
        (("response_length_mean", "mean response length (tokens)"),),
        "Mean response length per training step.",
    ),
    FigureSpec(
        "entropy",
        "Raw entropy",
        (("entropy_mean", "mean token entropy (nats)"),),
        "Mean token entropy of the policy's responses.",
    ),
    FigureSpec(
        "normalized_entropy",
        "Normalised entropy",
        (("rho_mean", "mean ρ"),),
        "Mean normalised entropy ρ, the information-time increment.",
    ),
    FigureSpec(
        "info_discount",
        "Discount over a response, in both clocks",
        (
            ("info_discount_mean", "mean Γ_info(0,T) = γ^Σρ"),
            ("token_discount_mean", "mean Γ_token(0,T) = γ^T"),
        ),
        "Mean discount of a whole response in information time, Γ_info(0,T), and in token time, γ^T "
        "(log scale).",
        log_y=True,
    ),
    FigureSpec(
        "clip_bounds",
        "Clip bounds",
        (("clip_upper_mean", "mean upper clip bound"), ("clip_lower_mean", "mean lower clip bound")),
        "Mean upper and lower clip bounds of the importance ratio.",
    ),
)


def new_figure(panels: int, title: str) -> Any:
    """A figure of ``panels`` panels side by side, drawn by Agg (so text can be measured before saving)."""
    figure = Figure(figsize=(PANEL_INCHES[0] * panels, PANEL_INCHES[1]), layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(title)
    return figure


def colors_for(keys: Iterable[str]) -> dict[str, Any]:
    ordered = list(dict.fromkeys(keys))
    palette = matplotlib.colormaps["tab10" if len(ordered) <= 10 else "viridis"]
    count = max(len(ordered) - 1, 1)
    return {key: palette(i if len(ordered) <= 10 else i / count) for i, key in enumerate(ordered)}


def _styles(arms: Iterable[str]) -> dict[str, str]:
    return {arm: LINE_STYLES[i % len(LINE_STYLES)] for i, arm in enumerate(dict.fromkeys(arms))}


def one_legend(figure: Any, axes: Sequence[Any], extra: Sequence[Any] = ()) -> None:
    """A single legend below the panels with every labelled artist once (and the ``extra`` handles), in
    as many columns (at most four) as the figure's width holds; labels too long for one column are
    wrapped. The figure grows by the legend's rows beyond the first, so the panels keep their height."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    for handle in extra:
        seen.setdefault(handle.get_label(), handle)
    if not seen:
        return
    legend, rows = _fitting_legend(figure, list(seen.values()), list(seen))
    height = legend.get_window_extent(figure.canvas.get_renderer()).height / figure.dpi
    figure.set_figheight(PANEL_INCHES[1] + height * (rows - 1) / rows)


def _fitting_legend(figure: Any, handles: list[Any], labels: list[str]) -> tuple[Any, int]:
    """The widest legend that fits the figure: fewer columns first, then wrapped labels in one."""
    renderer = figure.canvas.get_renderer()
    room = figure.bbox.width * LEGEND_WIDTH_SHARE
    tries = [(columns, labels) for columns in range(min(len(labels), LEGEND_COLUMNS), 0, -1)]
    tries += [(1, [textwrap.fill(label, chars) for label in labels]) for chars in WRAP_WIDTHS]
    for columns, shown in tries[:-1]:
        legend = figure.legend(handles, shown, loc="outside lower center", ncols=columns, frameon=False)
        if legend.get_window_extent(renderer).width <= room:
            return legend, -(-len(labels) // columns)
        legend.remove()
    columns, shown = tries[-1]  # the narrowest wrapping, kept whatever its width
    return figure.legend(handles, shown, loc="outside lower center", ncols=columns, frameon=False), len(
        labels
    )


def save_figure(figure: Any, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Write ``stem.<format>`` for every format, each atomically."""
    written = []
    with matplotlib.rc_context(PAPER_RC):
        for fmt in formats:
            path = stem.with_name(f"{stem.name}.{fmt}")
            with atomic_writer(path, "wb") as handle:
                figure.savefig(handle, format=fmt, dpi=DPI)
            written.append(path)
    return written


def draw_curves(
    stem: Path,
    title: str,
    panels: Sequence[tuple[str, list[Curve]]],
    formats: Sequence[str],
    log_y: bool = False,
    xlabel: str = "training step",
) -> list[Path]:
    """Draw :func:`curve_figure` and write it in every format."""
    return save_figure(curve_figure(title, panels, log_y, xlabel), stem, formats)


def curve_figure(
    title: str, panels: Sequence[tuple[str, list[Curve]]], log_y: bool = False, xlabel: str = "training step"
) -> Any:
    """One panel per (y label, curves) with the training step on the x axis. Non-finite values leave a
    gap in their line, and a dotted vertical line in the curve's colour marks each step a curve turned
    non-finite."""
    all_curves = [curve for _, curves in panels for curve in curves]
    colors = colors_for(curve.color_key for curve in all_curves)
    styles = _styles(curve.arm for curve in all_curves)
    with matplotlib.rc_context(PAPER_RC):
        figure = new_figure(len(panels), title)
        axes = figure.subplots(1, len(panels), squeeze=False)[0]
        for ax, (ylabel, curves) in zip(axes, panels, strict=True):
            for curve in curves:
                _draw_curve(ax, curve, colors[curve.color_key], styles[curve.arm], _bounds(ylabel))
            _show_every_step(ax, [step for curve in curves for step in curve.steps])
            ax.set_xlabel(xlabel)
            set_step_ticks(ax, [step for curve in curves for step in curve.steps])  # an eval's at its steps
            ax.set_ylabel(ylabel)
            if log_y:
                ax.set_yscale("log")
                set_plain_log_ticks(
                    ax, [v for curve in curves for v in (*curve.mean, *curve.low, *curve.high)]
                )
            ax.grid(alpha=0.3)
            if not curves:
                ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        extra = []
        if any(curve.seeds > 1 for curve in all_curves):
            extra.append(Patch(facecolor="0.5", alpha=0.2, linewidth=0, label=BAND_LABEL))
        if any(curve.breaks for curve in all_curves):
            extra.append(Line2D([], [], color="0.3", linestyle=":", label=BREAK_LABEL))
        one_legend(figure, axes, extra)
    return figure


def _finite_or_nan(values: Sequence[float]) -> list[float]:
    """Matplotlib leaves NaN out of a line; an infinity would stretch or break the axis instead."""
    return [value if math.isfinite(value) else math.nan for value in values]


def _show_every_step(ax: Any, steps: Sequence[float]) -> None:
    """Span every step a curve has, also those whose values are NaN (which autoscaling would cut off):
    a run that diverged at step 3 of 40 shows as 40 steps with a gap, not as a 2-step run."""
    if steps:
        low, high = min(steps), max(steps)
        pad = 0.05 * (high - low) or 0.5
        ax.set_xlim(low - pad, high + pad)


def _clamped(values: Sequence[float], bounds: tuple[float, float] | None) -> list[float]:
    """:func:`_finite_or_nan`, then cut to ``bounds`` (NaN left as NaN)."""
    finite = _finite_or_nan(values)
    if bounds is None:
        return finite
    return [min(max(value, bounds[0]), bounds[1]) if math.isfinite(value) else value for value in finite]


def _finite_at(values: Sequence[float], index: int) -> bool:
    return 0 <= index < len(values) and math.isfinite(values[index])


def _bounds(ylabel: str) -> tuple[float, float] | None:
    """The range a panel's values can take: a percentage's band (few seeds give wide t intervals) is
    cut at 0 and 100 instead of promising accuracies no run can have."""
    return (0.0, 100.0) if ylabel.endswith("(%)") else None


def _draw_curve(
    ax: Any, curve: Curve, color: Any, style: str, bounds: tuple[float, float] | None = None
) -> None:
    mean = _finite_or_nan(curve.mean)
    ax.plot(curve.steps, mean, style, color=color, label=curve.label)
    lone = [
        i
        for i in range(len(mean))
        if _finite_at(mean, i) and not (_finite_at(mean, i - 1) or _finite_at(mean, i + 1))
    ]
    if lone:  # a finite value between gaps draws no line segment: show it as a point
        ax.plot([curve.steps[i] for i in lone], [mean[i] for i in lone], "o", color=color, markersize=2)
    if curve.seeds > 1:
        low, high = _clamped(curve.low, bounds), _clamped(curve.high, bounds)
        ax.fill_between(curve.steps, low, high, color=color, alpha=0.2, linewidth=0)
    for step in curve.breaks:
        ax.axvline(step, color=color, linestyle=":", linewidth=0.9)
