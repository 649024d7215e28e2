"""Seeds are averaged with a 95% t interval; arms and values are told apart."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_runs import STEPS, finished_sweep

from infoppo_cli.report.curves import breaks_of, build_curves, final_accuracy_bars, mean_ci, t_critical
from infoppo_cli.report.runs import read_inputs


@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=40))
def test_the_interval_is_the_t_interval_of_the_mean(values: list[float]) -> None:
    mean, half = mean_ci(values)
    assert mean == pytest.approx(statistics.fmean(values), abs=1e-9)
    expected = t_critical(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    assert half == pytest.approx(expected, abs=1e-9) and half >= 0


def test_t_critical_values_match_the_table_and_tend_to_the_normal() -> None:
    assert t_critical(1) == 12.706 and t_critical(4) == 2.776 and t_critical(1000) == 1.96
    assert mean_ci([3.0]) == (3.0, 0.0)
    with pytest.raises(ValueError):
        t_critical(0)


def test_seeds_of_a_grid_point_are_averaged_and_arms_are_told_apart(tmp_path: Path) -> None:
    runs = read_inputs([finished_sweep(tmp_path / "gamma", "gamma", 3, ["0.999,0.99"])]).runs
    curves = {curve.label: curve for curve in build_curves(runs, "reward_mean")}
    assert set(curves) == {f"γ={g} {arm}" for g in ("0.999", "0.99") for arm in ("info", "token")}
    curve = curves["γ=0.999 info"]
    assert curve.steps == list(map(float, STEPS)) and curve.seeds == 3 and curve.arm == "info"
    assert curve.mean == pytest.approx([0.1 * s + 0.02 for s in STEPS])  # seeds add 0.01, 0.02, 0.03
    half = 4.303 * 0.01 / math.sqrt(3)
    assert curve.low == pytest.approx([0.1 * s + 0.02 - half for s in STEPS])
    assert {c.label for c in build_curves(runs, "rho_mean")} == {"γ=0.999 info", "γ=0.99 info"}


def test_final_accuracy_bars_hold_every_seed(tmp_path: Path) -> None:
    runs = read_inputs([finished_sweep(tmp_path / "comp", "components", 2)]).runs
    bars = final_accuracy_bars(runs, "aime24")
    assert [bar.arm for bar in bars] == ["ppo", "info-gae", "info-clip", "infoppo"]
    assert all(len(bar.seed_scores) == 2 for bar in bars)
    assert bars[0].mean == pytest.approx(statistics.fmean(bars[0].seed_scores))


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=10), st.sampled_from([math.nan, math.inf]))
def test_a_non_finite_seed_makes_the_mean_non_finite_and_the_interval_nan(values, bad) -> None:
    mean, half = mean_ci([*values, bad])
    assert not math.isfinite(mean) and math.isnan(half)


def test_a_seed_that_diverges_breaks_its_grid_points_curve_where_it_diverged(tmp_path: Path) -> None:
    out = finished_sweep(tmp_path / "norm", "norm", 2, ["batch"])
    metrics = out / "norm-batch-info-seed2" / "metrics.jsonl"
    lines = metrics.read_text().splitlines()
    lines[2] = json.dumps({"step": 3, "reward_mean": "NaN", "entropy_mean": 0.1})
    metrics.write_text("\n".join(lines) + "\n")
    runs = read_inputs([out]).runs
    [info] = [curve for curve in build_curves(runs, "reward_mean") if curve.arm == "info"]
    assert info.steps == [1.0, 2.0, 3.0, 4.0] and math.isnan(info.mean[2]) and math.isfinite(info.mean[3])
    assert info.breaks == [3.0]
    [entropy] = [curve for curve in build_curves(runs, "entropy_mean") if curve.arm == "info"]
    assert entropy.breaks == [3.0]  # the run broke there, though its entropy stayed finite
    [bar] = [bar for bar in final_accuracy_bars(runs, "aime24") if bar.arm == "info"]
    assert math.isfinite(bar.mean)  # its final eval is a number: the model was evaluated


def test_breaks_are_where_values_turn_non_finite() -> None:
    nan = math.nan
    assert breaks_of([1, 2, 3, 4, 5], [nan, 1.0, nan, nan, 2.0]) == [1, 3]
    assert breaks_of([1, 2], [1.0, 2.0]) == []
