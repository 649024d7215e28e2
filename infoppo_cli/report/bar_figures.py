"""The report's bar figures: final accuracy per grid point of a sweep (mean over seeds with a 95% CI, every
seed as a point) and Mean@k per benchmark and model from ``infoppo eval`` (± one standard error).

A bar whose value is not finite (a diverged seed, a NaN Mean@k) is not drawn at some other height: its
place holds a red ``NaN``/``inf`` mark at the foot of the axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

from infoppo_cli.report.curves import KIND_SYMBOLS, Bar
from infoppo_cli.report.figures import PAPER_RC, colors_for, new_figure, one_legend, save_figure

NONFINITE_COLOR = "tab:red"


@dataclass(frozen=True)
class ScoreBar:
    """One model's Mean@k on one benchmark, with its standard error (``None`` when the eval had none)."""

    label: str
    bench: str
    score: float
    se: float | None


def _mark_nonfinite(ax: Any, x: float, value: float) -> None:
    """Write what a bar that cannot be drawn holds, at its place on the x axis."""
    text = "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    ax.text(
        x, 0.02, text, transform=ax.get_xaxis_transform(), ha="center", va="bottom", color=NONFINITE_COLOR
    )


def _accuracy_axis(ax: Any, values: Sequence[float]) -> None:
    """Accuracy bars start at 0; with no finite value at all the axis spans 0-100%."""
    if any(math.isfinite(value) for value in values):
        ax.set_ylim(bottom=0)
    else:
        ax.set_ylim(0, 100)


def draw_final_bars(
    stem: Path, kind: str, panels: Sequence[tuple[str, list[Bar]]], formats: Sequence[str]
) -> list[Path]:
    """Draw :func:`final_bars_figure` and write it in every format."""
    return save_figure(final_bars_figure(kind, panels), stem, formats)


def final_bars_figure(kind: str, panels: Sequence[tuple[str, list[Bar]]]) -> Any:
    """Final accuracy per grid point: a bar per (value, arm) at the mean over seeds with its 95% CI,
    and every seed's score as a point on its bar; one panel per benchmark."""
    bars = [bar for _, group in panels for bar in group]
    values = list(dict.fromkeys(bar.value_label for bar in bars))
    arms = list(dict.fromkeys(bar.arm for bar in bars))
    colors = colors_for(arms)
    width = 0.8 / len(arms)
    with matplotlib.rc_context(PAPER_RC):
        symbol = KIND_SYMBOLS.get(kind, kind)
        figure = new_figure(len(panels), f"Final accuracy ({kind} sweep)")
        axes = figure.subplots(1, len(panels), squeeze=False)[0]
        for ax, (bench, group) in zip(axes, panels, strict=True):
            for bar in group:
                x = values.index(bar.value_label) + (arms.index(bar.arm) - (len(arms) - 1) / 2) * width
                _draw_bar(ax, x, width * 0.9, bar, colors[bar.arm])
            if any(values):
                ax.set_xticks(range(len(values)), values)
                ax.set_xlabel(symbol)
            else:  # a components sweep: the arms are the bars, told apart by the legend
                ax.set_xticks([])
            _accuracy_axis(ax, [bar.mean for bar in group])
            ax.set_ylabel(f"{bench} accuracy (%)")
            ax.grid(axis="y", alpha=0.3)
        one_legend(figure, axes)
    return figure


def _value_bar(
    ax: Any, x: float, width: float, value: float, error: float | None, color: Any, label: str
) -> None:
    """A bar at ``value`` with its error bar; a non-finite one is drawn empty (it keeps its label in the
    legend) with a mark saying why it has no height."""
    if math.isfinite(value):
        ax.bar(x, value, width, yerr=error, capsize=2, color=color, label=label)
    else:
        ax.bar(x, 0, width, color=color, label=label)
        _mark_nonfinite(ax, x, value)


def _draw_bar(ax: Any, x: float, width: float, bar: Bar, color: Any) -> None:
    error = bar.half_width if len(bar.seed_scores) > 1 else None
    _value_bar(ax, x, width, bar.mean, error, color, bar.arm)
    finite = [score for score in bar.seed_scores if math.isfinite(score)]
    ax.scatter([x] * len(finite), finite, s=8, color="black", zorder=3)


def draw_mean_at_k(stem: Path, bars: Sequence[ScoreBar], formats: Sequence[str]) -> list[Path]:
    """Draw :func:`mean_at_k_figure` and write it in every format."""
    return save_figure(mean_at_k_figure(bars), stem, formats)


def mean_at_k_figure(bars: Sequence[ScoreBar]) -> Any:
    """Mean@k per benchmark (x) and model (bar colour) with ± one standard error, one panel."""
    benches = list(dict.fromkeys(bar.bench for bar in bars))
    labels = list(dict.fromkeys(bar.label for bar in bars))
    colors = colors_for(labels)
    width = 0.8 / len(labels)
    with matplotlib.rc_context(PAPER_RC):
        figure = new_figure(1, "Mean@k by benchmark")
        ax = figure.subplots()
        for bar in bars:
            x = benches.index(bar.bench) + (labels.index(bar.label) - (len(labels) - 1) / 2) * width
            error = bar.se if bar.se is not None and math.isfinite(bar.se) else None
            _value_bar(ax, x, width * 0.9, bar.score, error, colors[bar.label], bar.label)
        ax.set_xticks(range(len(benches)), benches)
        _accuracy_axis(ax, [bar.score for bar in bars])
        ax.set_ylabel("Mean@k accuracy (%)")
        ax.grid(axis="y", alpha=0.3)
        one_legend(figure, [ax])
    return figure
