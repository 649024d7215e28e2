"""``entropy_tokens.png``: InfoPPO's Figure 2 as two word clouds (highest and lowest mean entropy), each
word placed where it overlaps no other (:mod:`infoppo_cli.inspect.cloud`)."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib
import pyarrow as pa
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from infoppo_cli.atomic import atomic_writer
from infoppo_cli.inspect.cloud import draw_cloud

_TITLES = {"high": "Highest mean entropy", "low": "Lowest mean entropy"}
_COLOURS = {"high": "OrRd", "low": "PuBu"}
DPI = 150
_VISIBLE = {" ": "<sp>", "\n": "\\n", "\t": "\\t"}


def shown(token: str) -> str:
    """A token as a reader can see it: surrounding spaces dropped, a whitespace-only token named."""
    text = token.strip()
    if text:
        return text
    return "".join(_VISIBLE.get(ch, repr(ch)[1:-1]) for ch in token) or "∅"


def _ranked(top: pa.Table, which: str) -> list[tuple[str, float, int]]:
    rows = top.filter(pa.compute.equal(top["list"], which)).to_pylist()
    return [(shown(r["token"]), r["mean_entropy"], r["rank"]) for r in rows]


def write_figure(top: pa.Table, path: Path, counted_at_least: int) -> str:
    """Draw the figure into ``path`` atomically; returns ``"wordcloud"``."""
    matplotlib.use("Agg")
    figure = Figure(figsize=(12, 6), dpi=DPI)
    FigureCanvasAgg(figure)
    figure.suptitle(f"Tokens seen at least {counted_at_least} times", fontsize=11)
    axes = figure.subplots(1, 2)
    figure.subplots_adjust(left=0.02, right=0.98, bottom=0.03, top=0.86, wspace=0.06)
    with warnings.catch_warnings():  # a token in a script the font lacks shows as boxes; no warning
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        for axis, which in zip(axes, ("high", "low"), strict=True):
            ranked = _ranked(top, which)
            words = _cloud_words(ranked, which)
            placed = draw_cloud(axis, words)
            left_out = f", {len(words) - placed} too small to show" if placed < len(words) else ""
            axis.set_title(f"{_TITLES[which]} ({len(ranked)} tokens{left_out})", fontsize=14)
            if not ranked:
                axis.text(
                    0.5,
                    0.5,
                    "no token is frequent enough",
                    ha="center",
                    va="center",
                    transform=axis.transAxes,
                )
        with atomic_writer(path, "wb") as handle:
            figure.savefig(handle, format="png", dpi=DPI)
    return "wordcloud"


def _cloud_words(ranked: list[tuple[str, float, int]], which: str) -> list[tuple[str, float, str]]:
    """(text, weight in (0, 1], colour) per shown token, the most extreme first: sized by rank, so high
    and low clouds read the same way; a token shown twice (two spellings stripped alike) keeps its best
    rank."""
    sizes: dict[str, float] = {}
    for text, _, rank in ranked:
        sizes[text] = max(sizes.get(text, 0.0), float(len(ranked) - rank + 1))
    if not sizes:
        return []
    palette = matplotlib.colormaps[_COLOURS[which]]
    largest = max(sizes.values())
    ordered = sorted(sizes.items(), key=lambda item: -item[1])
    # never paler than the colour map's middle: readable on white
    return [(text, size / largest, palette(0.45 + 0.55 * size / largest)) for text, size in ordered]
