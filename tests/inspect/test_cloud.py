"""The word clouds of entropy_tokens.png: every word placed where it overlaps no other, inside its axes,
the boxes measured by matplotlib's renderer."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from infoppo_cli.inspect.cloud import draw_cloud
from infoppo_cli.inspect.figures import write_figure


def words(count: int, seed: int = 0) -> list[tuple[str, float, str]]:
    rng = random.Random(seed)
    shapes = ["therefore", "\\frac", "$", "$x$", "Wait", "<sp>", "\\n", "}", "x^2", "boxed"]
    shapes += [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 14)))
        for _ in range(300)
    ]
    chosen = list(dict.fromkeys(shapes))[:count]
    return [(text, 1 - i / max(count - 1, 1), "black") for i, text in enumerate(chosen)]


def boxes(axis) -> list:
    renderer = axis.figure.canvas.get_renderer()
    return [text.get_window_extent(renderer) for text in axis.texts]


def overlapping(found: list) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i in range(len(found))
        for j in range(i + 1, len(found))
        if found[i].x0 < found[j].x1 and found[j].x0 < found[i].x1
        and found[i].y0 < found[j].y1 and found[j].y0 < found[i].y1
    ]  # fmt: skip


@pytest.mark.parametrize(("count", "size"), [(5, (6, 6)), (60, (6, 6)), (100, (6, 6)), (150, (3, 2))])
def test_no_two_words_overlap_and_every_word_is_inside_its_axes(count, size) -> None:
    figure = Figure(figsize=size, dpi=100)
    FigureCanvasAgg(figure)
    axis = figure.subplots()
    given = words(count)
    placed = draw_cloud(axis, given)
    figure.canvas.draw()  # measured again as drawn
    found = boxes(axis)
    assert len(found) == placed and not overlapping(found)
    area = axis.get_window_extent()
    assert all(
        area.x0 - 1 <= b.x0 and b.x1 <= area.x1 + 1 and area.y0 - 1 <= b.y0 and b.y1 <= area.y1 + 1
        for b in found
    )
    if size == (6, 6):
        assert placed == count  # room for them all
    assert {text.get_text() for text in axis.texts} <= {text for text, _, _ in given}
    heights = {text.get_text(): box.height for text, box in zip(axis.texts, found, strict=True)}
    assert heights[given[0][0]] >= max(heights.values()) * 0.99  # the first word is drawn largest


def test_the_figure_has_both_clouds_without_overlap(tmp_path: Path, monkeypatch) -> None:
    rows = [
        {"list": which, "token": f" {text}", "mean_entropy": 1.0, "rank": rank}
        for which in ("high", "low")
        for rank, (text, _, _) in enumerate(words(80, seed=1 if which == "high" else 2), start=1)
    ]
    drawn = []
    import infoppo_cli.inspect.figures as figures

    def keep(axis, cloud_words):
        drawn.append(axis)
        return draw_cloud(axis, cloud_words)

    monkeypatch.setattr(figures, "draw_cloud", keep)
    assert write_figure(pa.Table.from_pylist(rows), tmp_path / "cloud.png", 3) == "wordcloud"
    assert (tmp_path / "cloud.png").stat().st_size > 0 and len(drawn) == 2
    for axis in drawn:
        found = boxes(axis)
        assert len(found) == 80 and not overlapping(found)
