"""The contrasts written out by a report: contrasts.md, contrasts.csv, the forest plot and report.md's
section, from runs whose differences are known (tests/support/contrast_runs.py)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from contrast_runs import CONTRASTS_TOML, contrast_runs

from infoppo_cli.report.contrast_report import INTERVAL_LABEL, forest_figure
from infoppo_cli.report.contrasts import Arm, Contrast, contrast_results
from infoppo_cli.report.core import Report, make_report
from infoppo_cli.report.runs import read_inputs

HALF_LAST = 4.303 * 2 / math.sqrt(3)
"""The 95% t half-width of the last-eval differences 12, 14, 16 (t(0.975, 2) = 4.303, sd 2, n 3)."""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    root = tmp_path_factory.mktemp("contrasts")
    (root / "design.toml").write_text(CONTRASTS_TOML)
    runs = contrast_runs(root)
    return make_report([runs], root / "report", formats=("png",), contrasts_file=root / "design.toml")


def test_contrasts_md_holds_each_difference_its_interval_and_seeds_then_the_arms(report: Report) -> None:
    text = (report.out_dir / "contrasts.md").read_text()
    low, high = 14 - HALF_LAST, 14 + HALF_LAST
    assert f"| clock | aime24 | last | 3 | +14 | [+{low:.4g}, +{high:.4g}] | 1: +12, 2: +14, 3: +16 |" in text
    assert "| discount | aime24 | last3 | 3 | +10.33 |" in text
    assert "95% t interval over seeds (n − 1 degrees of freedom" in text
    assert "| clock | a: infoppo γ=0.99 λ=1 | 3 | 84 ± 1.155 |" in text
    assert "| clock | b: ppo γ=0.99 λ=1 | 3 | 70 ± 0 |" in text and "| 102 | - | 0.4 |" in text
    assert "- clock: seed(s) 4 of arm a have no run in the other arm and are left out" in text


def test_contrasts_csv_has_one_row_per_contrast_and_metric_at_full_precision(report: Report) -> None:
    with open(report.out_dir / "contrasts.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["contrast"], row["metric"]) for row in rows] == [
        (name, metric) for name in ("clock", "discount") for metric in ("last", "last3", "auc")
    ]
    last = rows[0]
    assert float(last["mean_difference"]) == 14.0 and last["n"] == "3" and last["seeds"] == "1;2;3"
    assert float(last["ci95_low"]) == pytest.approx(14 - HALF_LAST)
    assert float(last["ci95_high"]) == pytest.approx(14 + HALF_LAST)
    assert [float(value) for value in last["differences"].split(";")] == [12.0, 14.0, 16.0]
    assert (last["a"], last["b"], float(last["a_mean"]), float(last["b_mean"])) == (
        "infoppo γ=0.99 λ=1",
        "ppo γ=0.99 λ=1",
        84.0,
        70.0,
    )
    assert float(last["a_info_discount_mean"]) == 0.5 and last["b_info_discount_mean"] == ""


def test_the_forest_plot_and_report_md_name_the_interval(report: Report) -> None:
    assert (report.out_dir / "contrasts.png").exists()
    caption = report.captions["contrasts"]
    assert "95% t interval over seeds" in caption and "a − b" in caption
    text = report.report_md.read_text()
    assert "![contrasts](contrasts.png)" in text and "## Pre-registered contrasts" in text
    assert "| clock | aime24 | auc | 3 | +8 |" in text


def test_the_forest_plot_draws_each_mean_with_its_interval_and_a_zero_line(tmp_path: Path) -> None:
    runs = read_inputs([contrast_runs(tmp_path)]).runs
    results = contrast_results(runs, [Contrast("clock", Arm("infoppo", 0.99, 1.0), Arm("ppo", 0.99, 1.0))])
    figure = forest_figure(results)
    ax = figure.get_axes()[0]
    assert (
        ax.get_xlabel()
        == INTERVAL_LABEL
        == "a − b (accuracy points, or the record named), 95% t interval over seeds"
    )
    assert [label.get_text() for label in ax.get_yticklabels()] == [
        "clock: auc",
        "clock: last3",
        "clock: last",
    ]
    zero = [line for line in ax.get_lines() if list(line.get_xdata()) == [0.0, 0.0]]
    assert len(zero) == 1
    bars = [collection for collection in ax.collections if collection.get_segments()]
    top = max(bars, key=lambda c: max(segment[0][1] for segment in c.get_segments())).get_segments()[0]
    assert top[0][0] == pytest.approx(14 - HALF_LAST) and top[1][0] == pytest.approx(14 + HALF_LAST)


def test_the_forest_plot_widens_until_long_contrast_names_and_its_labels_fit(tmp_path: Path) -> None:
    """A contrast name as long as the ablation design's took the axes' width, and the x label, centred
    under the narrowed axes, ran off the figure's right edge."""
    name = "adaptive clip against PPO's, information time, γ = 0.99"
    runs = read_inputs([contrast_runs(tmp_path)]).runs
    results = contrast_results(runs, [Contrast(name, Arm("infoppo", 0.99, 1.0), Arm("ppo", 0.99, 1.0))])
    figure = forest_figure(results)
    figure.savefig(tmp_path / "forest.png", dpi=100)
    drawn, box = figure.get_tightbbox(), figure.bbox_inches  # every artist drawn, in inches
    assert box.x0 - 0.02 <= drawn.x0 and drawn.x1 <= box.x1 + 0.02
    assert figure.get_figwidth() > 2 * 3.3
