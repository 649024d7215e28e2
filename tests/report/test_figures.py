"""The figures' content, read back from matplotlib: bands, points, axes, one legend, fonts."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from report_runs import STEPS, finished_sweep

from infoppo_cli.report.curves import build_curves, final_accuracy_bars
from infoppo_cli.report.figures import PAPER_RC, curve_figure, final_bars_figure, save_figure
from infoppo_cli.report.runs import read_inputs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    sweep = finished_sweep(tmp_path_factory.mktemp("s") / "gamma", "gamma", 3, ["0.999,0.99"])
    return read_inputs([sweep]).runs


def test_curves_show_the_mean_with_its_95_percent_band_and_one_legend(runs: list) -> None:
    curves = build_curves(runs, "reward_mean")
    figure = curve_figure("Reward", [("reward", curves), ("reward again", curves)])
    axes = figure.get_axes()
    assert len(figure.legends) == 1 and all(ax.get_legend() is None for ax in axes)
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == [curve.label for curve in curves]  # every curve once, though drawn in two panels
    line = next(line for line in axes[0].get_lines() if line.get_label() == "γ=0.999 info")
    assert list(line.get_xdata()) == list(map(float, STEPS))
    expected_mean = [0.1 * step + 0.02 for step in STEPS]
    assert list(line.get_ydata()) == pytest.approx(expected_mean)
    band = axes[0].collections[0].get_paths()[0].vertices
    half = 4.303 * statistics.stdev([0.01, 0.02, 0.03]) / math.sqrt(3)  # t(0.975, 2)
    assert band[:, 1].max() == pytest.approx(max(expected_mean) + half)
    assert band[:, 1].min() == pytest.approx(min(expected_mean) - half)


def test_info_discount_is_drawn_on_a_log_axis(runs: list) -> None:
    figure = curve_figure("Γ", [("Γ_info", build_curves(runs, "info_discount_mean"))], log_y=True)
    assert figure.get_axes()[0].get_yscale() == "log"
    assert figure.get_axes()[0].get_xlabel() == "training step"


def test_final_accuracy_bars_carry_their_ci_and_every_seed_as_a_point(runs: list) -> None:
    bars = final_accuracy_bars(runs, "aime24")
    figure = final_bars_figure("gamma", [("aime24", bars)])
    ax = figure.get_axes()[0]
    heights = sorted(patch.get_height() for patch in ax.patches)
    assert heights == pytest.approx(sorted(bar.mean for bar in bars))
    scatters = [collection for collection in ax.collections if isinstance(collection, PathCollection)]
    points = sorted(float(y) for collection in scatters for _, y in collection.get_offsets())
    assert points == pytest.approx(sorted(score for bar in bars for score in bar.seed_scores))
    assert len(points) == 12  # 2 values x 2 arms x 3 seeds
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["0.999", "0.99"]
    assert ax.get_xlabel() == "γ" and len(figure.legends) == 1


def test_text_is_set_for_a_column_wide_figure(runs: list, tmp_path: Path) -> None:
    figure = curve_figure("Reward", [("reward", build_curves(runs, "reward_mean"))])
    [png, svg] = save_figure(figure, tmp_path / "reward", ["png", "svg"])
    assert figure.get_figwidth() == pytest.approx(3.3) and PAPER_RC["font.size"] >= 7
    assert figure.get_axes()[0].yaxis.label.get_fontsize() == PAPER_RC["axes.labelsize"]
    svg_text = svg.read_text()
    assert "γ=0.999 info" in svg_text and svg_text.count("γ=0.999 info") == 1  # text kept as text, once
    from PIL import Image

    image = np.asarray(Image.open(png).convert("L"))
    assert image.shape == (round(2.4 * 300), round(3.3 * 300))
