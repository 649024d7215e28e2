"""The Figure 2 ranking, the token table and the summary statistics."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
import torch

from infoppo_cli.inspect.clock import clock, file_inputs
from infoppo_cli.inspect.settings import method_clock
from infoppo_cli.inspect.tokens import (
    Inspected,
    clock_drift,
    clock_summary,
    figure_min_count,
    token_stats,
    token_table,
    top_tokens,
)

MODEL = SimpleNamespace(vocab_size=1000)
"""A model config as a rho normalisation reads it."""


def _stats(rows: list[tuple[str, float]]) -> pa.Table:
    table = {"token": [t for t, _ in rows], "entropy": [h for _, h in rows], "rho": [h / 10 for _, h in rows]}
    return token_stats(pa.table(table))


def test_top_tokens_rank_by_mean_entropy_among_frequent_tokens():
    rows = [("a", 1.0)] * 3 + [("b", 5.0), ("b", 3.0), ("b", 4.0)] + [("c", 0.2)] * 3 + [("rare", 9.0)] * 2
    top = top_tokens(_stats(rows), top=2, min_count=3).to_pylist()
    high = [r for r in top if r["list"] == "high"]
    low = [r for r in top if r["list"] == "low"]
    assert [(r["token"], r["rank"], r["count"]) for r in high] == [("b", 1, 3), ("a", 2, 3)]
    assert high[0]["mean_entropy"] == pytest.approx(4.0) and high[0]["mean_rho"] == pytest.approx(0.4)
    assert [r["token"] for r in low] == ["c", "a"]
    assert "rare" not in {r["token"] for r in top}


def _inspected(h, other=None, rid="x"):
    s = method_clock(norm="sentence")

    def clock_of(values):
        return clock(torch.tensor(values), s, file_inputs([torch.tensor(values)], MODEL))

    second = clock_of(other) if other is not None else None
    return Inspected(rid, [f"t{i}" for i in range(len(h))], clock_of(h), None, second)


def test_token_table_and_drift_columns():
    responses = [_inspected([1.0, 2.0], [2.0, 2.0], "a"), _inspected([4.0], [1.0], "b")]
    table = token_table(responses)
    assert table.column_names[:3] == ["id", "position", "token"]
    assert table["id"].to_pylist() == ["a", "a", "b"] and table["position"].to_pylist() == [0, 1, 0]
    assert table["entropy_drift"].to_pylist() == [1.0, 0.0, -3.0]
    drift = clock_drift(responses)
    assert drift["entropy_diff"]["mean"] == pytest.approx(-2 / 3)
    assert drift["entropy_abs_diff_mean"] == pytest.approx(4 / 3)


def test_clock_summary_numbers():
    responses = [_inspected([1.0, 2.0, 4.0]), _inspected([3.0])]
    summary = clock_summary([r.clock for r in responses])
    assert summary["tokens"] == 4
    assert summary["entropy"]["mean"] == pytest.approx(2.5)
    assert summary["entropy"]["p50"] == pytest.approx(np.percentile([1, 2, 4, 3], 50))
    assert summary["rho_above_half"] == pytest.approx(0.5)  # rho = .25 .5 1 | 1
    assert summary["gamma_info_T_mean"] == pytest.approx((0.999**1.75 + 0.999**1.0) / 2, rel=1e-6)
    assert summary["gamma_token_T_mean"] == pytest.approx((0.999**3 + 0.999**1) / 2, rel=1e-6)


def test_figure_threshold_is_the_paper_s_on_a_large_file():
    rows = [(f"t{i}", 1.0) for i in range(5)] * 150
    assert figure_min_count(_stats(rows), top=5, given=None) == (100, None)


def test_figure_threshold_is_lowered_on_a_small_file_and_said():
    rows = [("a", 1.0)] * 7 + [("b", 2.0)] * 4 + [("c", 3.0)] * 2 + [("d", 4.0)]
    threshold, note = figure_min_count(_stats(rows), top=3, given=None)
    assert threshold == 2  # the 3rd most frequent token, c, is seen twice
    assert "at least 2 times, not InfoPPO's 100" in note and "--min-count" in note
    assert top_tokens(_stats(rows), top=3, min_count=threshold).num_rows == 6


def test_a_given_threshold_is_kept_and_an_empty_figure_is_said():
    rows = [("a", 1.0)] * 7 + [("b", 2.0)] * 4
    assert figure_min_count(_stats(rows), top=3, given=4) == (4, None)
    threshold, note = figure_min_count(_stats(rows), top=3, given=100)
    assert threshold == 100 and "no token is seen 100 times" in note and "seen 7 times" in note
