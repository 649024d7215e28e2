"""``entropy_tokens.png``: the paper's Figure 2 as two word clouds (highest and lowest mean entropy),
or ranked bar charts when the ``wordcloud`` package is missing."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pyarrow as pa

from infoppo_cli.atomic import atomic_writer

_TITLES = {"high": "Highest mean entropy", "low": "Lowest mean entropy"}
_COLOURS = {"high": "OrRd", "low": "PuBu"}
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
    """Draw the figure into ``path`` atomically; returns ``"wordcloud"`` or ``"bars"``."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        from wordcloud import WordCloud
    except ImportError:
        WordCloud = None
    fig, axes = plt.subplots(1, 2, figsize=(12, 6 if WordCloud else 12), dpi=150)
    for axis, which in zip(axes, ("high", "low"), strict=True):
        ranked = _ranked(top, which)
        if WordCloud is not None:
            _cloud(axis, WordCloud, ranked, which)
        else:
            _bars(axis, ranked, which)
        axis.set_title(f"{_TITLES[which]} ({len(ranked)} tokens)", fontsize=14)
    fig.suptitle(f"Tokens seen at least {counted_at_least} times", fontsize=11)
    fig.tight_layout()
    with atomic_writer(path, "wb") as handle:
        fig.savefig(handle, format="png")
    plt.close(fig)
    return "wordcloud" if WordCloud is not None else "bars"


def _cloud(axis, word_cloud, ranked: list[tuple[str, float, int]], which: str) -> None:
    axis.axis("off")
    if not ranked:
        axis.text(0.5, 0.5, "no token is frequent enough", ha="center", va="center")
        return
    # Size by rank (the most extreme token largest), so high and low clouds read the same way.
    sizes: dict[str, float] = {}
    for text, _, rank in ranked:
        sizes[text] = max(sizes.get(text, 0.0), float(len(ranked) - rank + 1))
    palette = matplotlib.colormaps[_COLOURS[which]]
    darkest = max(sizes.values())

    def colour(word: str, **_: object) -> str:  # never paler than the colour map's middle: readable on white
        red, green, blue, _alpha = palette(0.45 + 0.55 * sizes[word] / darkest)
        return f"rgb({int(255 * red)},{int(255 * green)},{int(255 * blue)})"

    cloud = word_cloud(
        width=900,
        height=700,
        background_color="white",
        color_func=colour,
        prefer_horizontal=0.95,
        random_state=0,
        max_words=len(sizes),
        min_font_size=8,
        relative_scaling=0.6,
    ).generate_from_frequencies(sizes)
    axis.imshow(cloud, interpolation="bilinear")


def _bars(axis, ranked: list[tuple[str, float, int]], which: str) -> None:
    shown_rows = ranked[:40]
    labels = [text for text, _, _ in shown_rows]
    values = [value for _, value, _ in shown_rows]
    axis.barh(range(len(values)), values, color="#d95f02" if which == "high" else "#1b9e77")
    axis.set_yticks(range(len(values)), labels, fontsize=8)
    axis.invert_yaxis()
    axis.set_xlabel("mean entropy (nats)")
