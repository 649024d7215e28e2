"""The curve figures' content, read back from matplotlib: bands, axes, one legend that fits, fonts, and
the break where a run's values turn non-finite."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from report_runs import STEPS, finished_sweep

from infoppo_cli.report.curves import Curve, build_curves
from infoppo_cli.report.figures import (
    BAND_LABEL,
    BREAK_LABEL,
    PANEL_INCHES,
    PAPER_RC,
    curve_figure,
    new_figure,
    one_legend,
    save_figure,
)
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
    assert labels == [*(curve.label for curve in curves), BAND_LABEL]  # each once, though in two panels
    assert BAND_LABEL == "shaded: 95% t interval over seeds"  # the band says what it is
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


def test_text_is_set_for_a_column_wide_figure(runs: list, tmp_path: Path) -> None:
    figure = curve_figure("Reward", [("reward", build_curves(runs, "reward_mean"))])
    [png, svg] = save_figure(figure, tmp_path / "reward", ["png", "svg"])
    assert figure.get_figwidth() == pytest.approx(3.3) and PAPER_RC["font.size"] >= 7
    assert figure.get_axes()[0].yaxis.label.get_fontsize() == PAPER_RC["axes.labelsize"]
    svg_text = svg.read_text()
    assert "γ=0.999 info" in svg_text and svg_text.count("γ=0.999 info") == 1  # text kept as text, once
    from PIL import Image

    image = np.asarray(Image.open(png).convert("L"))
    assert image.shape[1] == round(3.3 * 300) and image.shape[0] >= round(2.4 * 300)


def legend_inside(figure) -> bool:
    """Render ``figure`` and check that every legend's drawn box lies within the figure's."""
    import io

    figure.savefig(io.BytesIO(), format="png", dpi=100)
    box = figure.bbox
    for legend in figure.legends:
        extent = legend.get_window_extent()
        if (
            extent.x0 < box.x0 - 1
            or extent.x1 > box.x1 + 1
            or extent.y0 < box.y0 - 1
            or extent.y1 > box.y1 + 1
        ):
            return False
    return True


def curve(label: str, arm: str = "info") -> Curve:
    return Curve(label, arm, label, 1, [1.0, 2.0], [0.5, 0.4], [0.0, 0.0])


@pytest.mark.parametrize(
    "labels",
    [
        [f"γ={value} {arm}" for value in ("1.0", "0.9999", "0.999", "0.99") for arm in ("info", "token")],
        [f"qwen3-4b-infoppo-lr{i}e-6-very-long-run-name-seed{i}" for i in range(6)],
        ["deepseek-ai/DeepSeek-R1-Distill-Qwen-7B-" + "x" * 80],
    ],
    ids=["eight-grid-points", "long-run-names", "one-huge-label"],
)
def test_a_single_panel_legend_with_many_or_long_labels_fits_its_figure(labels: list[str]) -> None:
    figure = curve_figure("Entropy", [("entropy", [curve(label) for label in labels])])
    assert legend_inside(figure)
    texts = [text.get_text().replace("\n", "") for text in figure.legends[0].get_texts()]
    assert texts == labels  # wrapped at most, never cut
    axes_height = figure.get_axes()[0].get_position().height * figure.get_figheight()
    assert (
        axes_height > 0.45 * PANEL_INCHES[1]
    )  # the figure grew for the legend instead of the panel shrinking


def test_four_short_labels_stay_on_one_row_at_the_panel_height() -> None:
    figure = curve_figure("Reward", [("reward", [curve(str(i)) for i in range(4)])])
    assert figure.legends[0]._ncols == 4 and figure.get_figheight() == pytest.approx(PANEL_INCHES[1])
    assert legend_inside(figure)


def test_one_legend_takes_the_handles_of_every_panel_once() -> None:
    import matplotlib

    with matplotlib.rc_context(PAPER_RC):
        figure = new_figure(2, "t")
        axes = figure.subplots(1, 2)
        for ax in axes:
            ax.plot([1, 2], [1, 2], label="same")
        one_legend(figure, axes)
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["same"]


def test_a_curve_that_turns_nan_breaks_and_the_break_is_marked() -> None:
    steps = [float(step) for step in range(1, 11)]
    mean = [0.5, 0.4] + [math.nan] * 8
    broken = Curve("diverged", "info", "a", 1, steps, mean, [0.0] * 10, breaks=[3.0])
    figure = curve_figure("Entropy", [("entropy", [broken, curve("fine", "token")])])
    ax = figure.get_axes()[0]
    line = next(line for line in ax.get_lines() if line.get_label() == "diverged")
    assert np.isnan(line.get_ydata()[2:]).all() and list(line.get_ydata()[:2]) == [0.5, 0.4]
    verticals = [line for line in ax.get_lines() if list(line.get_xdata()) == [3.0, 3.0]]
    assert len(verticals) == 1 and verticals[0].get_linestyle() == ":"
    assert ax.get_xlim()[1] >= 10  # the run's 10 steps are shown, not only its 2 finite ones
    assert BREAK_LABEL in [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend_inside(figure)


def test_infinities_are_not_drawn_and_a_lone_finite_value_is_a_point() -> None:
    lone = Curve("lone", "info", "a", 1, [1.0, 2.0, 3.0], [math.inf, 0.3, math.nan], [0.0] * 3, breaks=[1.0])
    ax = curve_figure("Γ", [("Γ_info", [lone])], log_y=True).get_axes()[0]
    line = next(line for line in ax.get_lines() if line.get_label() == "lone")
    assert np.isnan(line.get_ydata()[0]) and np.isnan(line.get_ydata()[2])
    points = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert len(points) == 1 and list(points[0].get_ydata()) == [0.3]


def test_an_accuracy_band_stays_between_0_and_100_while_other_bands_do_not() -> None:
    wide = Curve("few seeds", "info", "a", 3, [0.0, 10.0], [50.0, 95.0], [60.0, 20.0])
    for ylabel, expected in (("chain accuracy (%)", (0.0, 100.0)), ("reward", (-10.0, 115.0))):
        ax = curve_figure("Accuracy", [(ylabel, [wide])]).get_axes()[0]
        band = ax.collections[0].get_paths()[0].vertices
        assert (band[:, 1].min(), band[:, 1].max()) == pytest.approx(expected)


def test_curves_of_one_seed_have_no_band_and_no_band_in_the_legend() -> None:
    figure = curve_figure("Reward", [("reward", [curve("alone")])])
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["alone"]
    assert not figure.get_axes()[0].collections
