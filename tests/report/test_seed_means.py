"""The sweep's final metrics averaged over seeds: mean ± 95% t interval and n per grid point; a diverged
seed makes the mean non-finite instead of being averaged away; unfinished runs do not count."""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_runs import finished_sweep

from infoppo_cli.report.curves import t_critical
from infoppo_cli.report.runs import read_inputs
from infoppo_cli.report.seed_means import SeedMean, seed_mean, seed_mean_csv, seed_mean_rows
from infoppo_cli.sweep.state import STATE_FILE, SweepState


@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=20))
def test_a_seed_mean_is_the_mean_with_its_t_interval_and_count(values: list[float]) -> None:
    result = seed_mean(values)
    assert result.n == len(values) and result.nonfinite == 0
    assert result.mean == pytest.approx(statistics.fmean(values), abs=1e-9)
    expected = t_critical(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    assert result.half_width == pytest.approx(expected, abs=1e-9)


def test_missing_values_are_left_out_and_non_finite_ones_make_the_mean_non_finite() -> None:
    assert seed_mean([None, None]) is None
    assert seed_mean([3.0, None]) == SeedMean(3.0, 0.0, 1)
    broken = seed_mean([30.0, math.nan, 31.0])
    assert math.isnan(broken.mean) and (broken.n, broken.nonfinite) == (3, 1)
    assert str(broken) == "NaN (n=3, 1 not finite)"
    assert str(SeedMean(31.5, 1.25, 3)) == "31.5 ± 1.25 (n=3)" and str(SeedMean(2.0, 0.0, 1)) == "2 (n=1)"


def test_a_sweep_has_one_row_per_grid_point_over_its_finished_seeds(tmp_path: Path) -> None:
    out = finished_sweep(tmp_path / "gamma", "gamma", 3, ["0.999,0.99"])
    state = SweepState.load(out / STATE_FILE)
    state.run("gamma-0.99-token-seed3").phases[0].status = "failed"
    state.run("gamma-0.99-token-seed3").refresh_status()
    state.save()
    runs = read_inputs([out]).runs
    columns, rows = seed_mean_rows(runs, ["aime24"])
    assert columns == ["sweep", "value", "arm", "done", "runs", "aime24", "reward", "length"]
    by_point = {(row[1], row[2]): dict(zip(columns, row, strict=True)) for row in rows}
    assert len(by_point) == 4
    info = by_point[("0.999", "info")]
    scores = [30 + 0.999 + seed + 3.0 for seed in (1, 2, 3)]  # the fixture's final eval scores
    assert info["aime24"].mean == pytest.approx(statistics.fmean(scores)) and info["aime24"].n == 3
    assert info["aime24"].half_width == pytest.approx(4.303 * statistics.stdev(scores) / math.sqrt(3))
    token = by_point[("0.99", "token")]
    assert (token["done"], token["runs"], token["aime24"].n) == (2, 3, 2)  # the failed seed is left out
    flat = list(csv.DictReader(io.StringIO(seed_mean_csv(columns, rows))))
    assert flat[0]["aime24_mean"] == repr(rows[0][5].mean) and flat[0]["aime24_n"] == "3"
    assert set(flat[0]) >= {"aime24_ci95", "reward_mean", "length_n"}


def test_runs_outside_a_sweep_have_no_seed_mean_row(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward_mean": 0.5}) + "\n")
    assert seed_mean_rows(read_inputs([run]).runs, []) == ([], [])
