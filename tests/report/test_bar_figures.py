"""The bar figures read back from matplotlib: final accuracy per grid point, Mean@k per benchmark and
model, and the mark a non-finite value gets instead of a bar."""

from __future__ import annotations

import io
import math

import pytest
from matplotlib.collections import PathCollection
from report_runs import finished_sweep

from infoppo_cli.report.bar_figures import NONFINITE_COLOR, ScoreBar, final_bars_figure, mean_at_k_figure
from infoppo_cli.report.curves import Bar, final_accuracy_bars
from infoppo_cli.report.runs import read_inputs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    sweep = finished_sweep(tmp_path_factory.mktemp("s") / "gamma", "gamma", 3, ["0.999,0.99"])
    return read_inputs([sweep]).runs


def seed_points(ax) -> list[float]:
    scatters = [collection for collection in ax.collections if isinstance(collection, PathCollection)]
    return sorted(float(y) for collection in scatters for _, y in collection.get_offsets())


def test_final_accuracy_bars_carry_their_ci_and_every_seed_as_a_point(runs: list) -> None:
    bars = final_accuracy_bars(runs, "aime24")
    figure = final_bars_figure("gamma", [("aime24", bars)])
    ax = figure.get_axes()[0]
    heights = sorted(patch.get_height() for patch in ax.patches)
    assert heights == pytest.approx(sorted(bar.mean for bar in bars))
    points = seed_points(ax)
    assert points == pytest.approx(sorted(score for bar in bars for score in bar.seed_scores))
    assert len(points) == 12  # 2 values x 2 arms x 3 seeds
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["0.999", "0.99"]
    assert ax.get_xlabel() == "γ" and len(figure.legends) == 1


def nonfinite_marks(ax) -> list[str]:
    return [text.get_text() for text in ax.texts if text.get_color() == NONFINITE_COLOR]


def test_a_grid_point_with_a_nan_seed_is_marked_not_drawn_at_the_other_seeds_mean() -> None:
    bars = [
        Bar("0.999", "info", math.nan, math.nan, [31.0, math.nan]),
        Bar("0.999", "token", 30.0, 1.0, [29, 31]),
    ]
    ax = final_bars_figure("gamma", [("aime24", bars)]).get_axes()[0]
    heights = [patch.get_height() for patch in ax.patches]
    assert sorted(heights) == [0, 30.0]  # the NaN bar keeps its legend entry but has no height
    assert nonfinite_marks(ax) == ["NaN"]
    assert seed_points(ax) == [29, 31, 31.0]  # the finite seeds are still shown


def test_mean_at_k_has_a_bar_per_model_and_benchmark_with_its_standard_error() -> None:
    bars = [
        ScoreBar("Qwen/Qwen3-4B", "aime24", 20.0, 1.5),
        ScoreBar("Qwen/Qwen3-4B", "aime25", 15.0, 1.0),
        ScoreBar("run-infoppo-seed1", "aime24", 30.0, 2.0),
        ScoreBar("run-infoppo-seed1", "aime25", math.inf, None),
    ]
    figure = mean_at_k_figure(bars)
    figure.savefig(io.BytesIO(), format="png")
    ax = figure.get_axes()[0]
    assert sorted(patch.get_height() for patch in ax.patches) == [0, 15.0, 20.0, 30.0]
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["aime24", "aime25"]
    caps = sorted(
        round(abs(segment[1][1] - segment[0][1]) / 2, 6)
        for collection in ax.collections
        for segment in collection.get_segments()
    )
    assert caps == [1.0, 1.5, 2.0]  # ± one SE; the infinite score has no error bar
    assert nonfinite_marks(ax) == ["inf"]
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == ["Qwen/Qwen3-4B", "run-infoppo-seed1"] and ax.get_ylim()[0] == 0
