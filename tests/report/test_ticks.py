"""Axis ticks a reader can use: x ticks at the logged (eval) steps, plain numbers on log axes."""

from __future__ import annotations

import io
import math

import pytest

from infoppo_cli.report.curves import Curve
from infoppo_cli.report.figures import curve_figure
from infoppo_cli.report.ticks import count_text, plain_number, step_ticks


def curve(label: str, steps: list[float], values: list[float]) -> Curve:
    return Curve(label, "info", label, 1, steps, values, [0.0] * len(values))


def drawn_ticks(figure, axis: str) -> tuple[list[float], list[str]]:
    figure.savefig(io.BytesIO(), format="png", dpi=50)  # tick labels are set when drawn
    ax = figure.get_axes()[0]
    which = ax.xaxis if axis == "x" else ax.yaxis
    low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
    ticks = [t for t in which.get_majorticklocs() if min(low, high) <= t <= max(low, high)]
    labels = [label.get_text() for label in which.get_majorticklabels() if label.get_text()]
    return ticks, labels


def test_x_ticks_are_the_eval_steps() -> None:
    steps = [0.0, 10.0, 20.0, 30.0, 40.0]
    figure = curve_figure("Accuracy", [("aime24 (%)", [curve("a", steps, [10, 12, 15, 14, 18])])])
    ticks, labels = drawn_ticks(figure, "x")
    assert ticks == steps and labels == ["0", "10", "20", "30", "40"]


def test_many_eval_steps_are_thinned_to_round_ones_among_them() -> None:
    evals = [float(step) for step in range(0, 1051, 10)]
    assert step_ticks(evals) == [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]
    assert set(step_ticks([*range(0, 1001, 100), 1050])) <= {*range(0, 1001, 100), 1050}
    assert step_ticks(range(5, 200, 10)) == [5.0, 55.0, 105.0, 155.0]  # no round one among them
    assert step_ticks([1, 2, 3, 4]) == [1.0, 2.0, 3.0, 4.0]
    for steps in (range(0, 1001, 7), [0, 3, 7, 12, 20, 33, 40, 51, 60], [0.5 * i for i in range(20)]):
        ticks = step_ticks(steps)
        assert 2 <= len(ticks) <= 7 and set(ticks) <= {float(step) for step in steps}


def test_log_axis_ticks_are_plain_numbers() -> None:
    narrow = curve("a", [1.0, 2.0, 3.0], [0.98, 0.955, 0.93])
    _, labels = drawn_ticks(curve_figure("Γ", [("Γ", [narrow])], log_y=True), "y")
    assert labels and all("10^" not in label and "×" not in label and "$" not in label for label in labels)
    assert all(0.9 <= float(label) <= 1.0 for label in labels) and len(labels) >= 3
    wide = curve("b", [1.0, 2.0, 3.0], [0.5, 1e-4, 1e-9])
    _, labels = drawn_ticks(curve_figure("Γ", [("Γ", [wide])], log_y=True), "y")
    assert labels and all("$" not in label for label in labels)
    assert {"0.01", "1e-6"} <= set(labels) or {"0.1", "1e-5"} <= set(labels)
    assert all(math.isclose(math.log10(float(label)), round(math.log10(float(label)))) for label in labels)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.95, "0.95"),
        (0.001, "0.001"),
        (1e-4, "1e-4"),
        (2.5e-12, "2.5e-12"),
        (1.0, "1"),
        (1200, "1200"),
        (0, "0"),
    ],
)
def test_plain_number(value: float, text: str) -> None:
    assert plain_number(value) == text


def test_counts_of_responses_are_short() -> None:
    assert [count_text(v) for v in (40, 1050, 51200, 1280000)] == ["40", "1050", "51.2k", "1.28M"]


def test_means_over_seeds_of_responses_get_round_ticks_across_the_span() -> None:
    points = [0.0, 640.0, 669.333, 1280.0, 1482.667, 2490.667, 3541.333, 3840.0, 4842.667, 6496.0]
    assert step_ticks(points) == [0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0, 6000.0]
    assert step_ticks([0.0, 12.5, 40.0]) == [0.0, 10.0, 20.0, 30.0, 40.0]
