"""The report's figures, drawn for a paper: matplotlib's non-interactive backends, one file per format.

Sizes and fonts follow a two-column paper: a panel is 3.3 in wide (one column of the ICML/NeurIPS
templates) with 8 pt text, so a figure printed at column width needs no scaling; PNG at 300 dpi (the
usual minimum for print), PDF and SVG vector with their text kept as text (TrueType in PDF, which
conference checkers require instead of Type 3; plain text in SVG). Every figure has one legend, below
its panels; curves are the mean over seeds with a 95% t band (see :mod:`infoppo_cli.report.curves`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_writer
from infoppo_cli.report.curves import KIND_SYMBOLS, Bar, Curve

PANEL_INCHES = (3.3, 2.4)
"""One panel: a column of a two-column paper wide; a figure of n panels is n panels wide."""
DPI = 300
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
LINE_STYLES = ("-", "--", ":", "-.")
"""Line style by arm, in the order the arms first appear (info solid, token dashed in a γ/λ sweep)."""

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
        "Information-time discount",
        (("info_discount_mean", "mean Γ_info(0,T)"),),
        "Mean information-time discount Γ_info(0,T) over a response (log scale).",
        log_y=True,
    ),
    FigureSpec(
        "clip_bounds",
        "Clip bounds",
        (("clip_upper_mean", "mean upper clip bound"), ("clip_lower_mean", "mean lower clip bound")),
        "Mean upper and lower clip bounds of the importance ratio.",
    ),
)


def _new_figure(panels: int, title: str) -> Any:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(PANEL_INCHES[0] * panels, PANEL_INCHES[1]), layout="constrained")
    figure.suptitle(title)
    return figure


def _colors(keys: Iterable[str]) -> dict[str, Any]:
    import matplotlib

    ordered = list(dict.fromkeys(keys))
    palette = matplotlib.colormaps["tab10" if len(ordered) <= 10 else "viridis"]
    count = max(len(ordered) - 1, 1)
    return {key: palette(i if len(ordered) <= 10 else i / count) for i, key in enumerate(ordered)}


def _styles(arms: Iterable[str]) -> dict[str, str]:
    return {arm: LINE_STYLES[i % len(LINE_STYLES)] for i, arm in enumerate(dict.fromkeys(arms))}


def _one_legend(figure: Any, axes: Sequence[Any]) -> None:
    """A single legend below the panels with every labelled line once."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        columns = min(len(seen), 4)
        figure.legend(
            list(seen.values()), list(seen), loc="outside lower center", ncols=columns, frameon=False
        )


def save_figure(figure: Any, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Write ``stem.<format>`` for every format, each atomically."""
    import matplotlib

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
) -> list[Path]:
    """Draw :func:`curve_figure` and write it in every format."""
    return save_figure(curve_figure(title, panels, log_y), stem, formats)


def curve_figure(title: str, panels: Sequence[tuple[str, list[Curve]]], log_y: bool = False) -> Any:
    """One panel per (y label, curves) with the training step on the x axis."""
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    all_curves = [curve for _, curves in panels for curve in curves]
    colors = _colors(curve.color_key for curve in all_curves)
    styles = _styles(curve.arm for curve in all_curves)
    with matplotlib.rc_context(PAPER_RC):
        figure = _new_figure(len(panels), title)
        axes = figure.subplots(1, len(panels), squeeze=False)[0]
        for ax, (ylabel, curves) in zip(axes, panels, strict=True):
            for curve in curves:
                color = colors[curve.color_key]
                ax.plot(curve.steps, curve.mean, styles[curve.arm], color=color, label=curve.label)
                if curve.seeds > 1:
                    ax.fill_between(curve.steps, curve.low, curve.high, color=color, alpha=0.2, linewidth=0)
            ax.set_xlabel("training step")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel(ylabel)
            if log_y:
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            if not curves:
                ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        _one_legend(figure, axes)
    return figure


def draw_final_bars(
    stem: Path, kind: str, panels: Sequence[tuple[str, list[Bar]]], formats: Sequence[str]
) -> list[Path]:
    """Draw :func:`final_bars_figure` and write it in every format."""
    return save_figure(final_bars_figure(kind, panels), stem, formats)


def final_bars_figure(kind: str, panels: Sequence[tuple[str, list[Bar]]]) -> Any:
    """Final accuracy per grid point: a bar per (value, arm) at the mean over seeds with its 95% CI,
    and every seed's score as a point on its bar; one panel per benchmark."""
    import matplotlib

    bars = [bar for _, group in panels for bar in group]
    values = list(dict.fromkeys(bar.value_label for bar in bars))
    arms = list(dict.fromkeys(bar.arm for bar in bars))
    colors = _colors(arms)
    width = 0.8 / len(arms)
    with matplotlib.rc_context(PAPER_RC):
        symbol = KIND_SYMBOLS.get(kind, kind)
        figure = _new_figure(len(panels), f"Final accuracy ({kind} sweep)")
        axes = figure.subplots(1, len(panels), squeeze=False)[0]
        for ax, (bench, group) in zip(axes, panels, strict=True):
            for bar in group:
                x = values.index(bar.value_label) + (arms.index(bar.arm) - (len(arms) - 1) / 2) * width
                error = bar.half_width if len(bar.seed_scores) > 1 else None
                ax.bar(x, bar.mean, width * 0.9, yerr=error, capsize=2, color=colors[bar.arm], label=bar.arm)
                ax.scatter([x] * len(bar.seed_scores), bar.seed_scores, s=8, color="black", zorder=3)
            if any(values):
                ax.set_xticks(range(len(values)), values)
                ax.set_xlabel(symbol)
            else:  # a components sweep: the arms are the bars, told apart by the legend
                ax.set_xticks([])
            ax.set_ylabel(f"{bench} accuracy (%)")
            ax.grid(axis="y", alpha=0.3)
        _one_legend(figure, axes)
    return figure
