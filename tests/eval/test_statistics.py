"""Evaluation statistics against exact formulas and hand-computed values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.eval.statistics import (
    METRIC_KEYS,
    GradedSample,
    average_metrics,
    bench_metrics,
    majority_correct,
    pass_at_k,
    pass_at_k_ladder,
    per_problem_accuracy,
)


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@st.composite
def n_c_k(draw):
    n = draw(st.integers(1, 80))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


@given(n_c_k())
def test_pass_at_k_matches_the_combinatorial_formula(args):
    n, c, k = args
    assert pass_at_k(n, c, k) == pytest.approx(float(exact_pass_at_k(n, c, k)), abs=1e-12)


@given(n_c_k())
def test_pass_at_k_is_monotone_in_k_and_c(args):
    n, c, k = args
    value = pass_at_k(n, c, k)
    assert 0.0 <= value <= 1.0
    if k < n:
        assert pass_at_k(n, c, k + 1) >= value - 1e-12
    if c < n:
        assert pass_at_k(n, c + 1, k) >= value - 1e-12


def test_pass_at_k_special_cases():
    assert pass_at_k(16, 0, 16) == 0.0
    assert pass_at_k(16, 16, 1) == 1.0
    assert pass_at_k(16, 1, 16) == 1.0  # n - c < k: some draw must contain the correct sample
    assert pass_at_k(16, 4, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (4, 5, 1), (4, -1, 1), (4, 2, 0), (4, 2, 5)])
def test_pass_at_k_rejects_impossible_arguments(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_pass_at_k_ladder():
    assert pass_at_k_ladder(16) == [1, 2, 4, 8, 16]
    assert pass_at_k_ladder(12) == [1, 2, 4, 8, 12]
    assert pass_at_k_ladder(1) == [1]


def s(
    correct: bool,
    extracted: str | None = None,
    tokens: int | None = None,
    finish: str | None = None,
    reason=None,
):
    if reason is None:
        reason = "correct" if correct else ("wrong" if extracted is not None else "no_answer")
    return GradedSample(correct, extracted, reason, tokens, finish)


def test_majority_vote_rules():
    # the correct samples vote together even when written differently
    assert majority_correct([s(True, "0.5"), s(True, "\\frac{1}{2}"), s(False, "3")]) == 1.0
    # the wrong answer wins after normalisation merges "025" and "25"
    assert majority_correct([s(True, "7"), s(False, "025"), s(False, "25")]) == 0.0
    # no-answer samples do not vote: one correct vote beats nothing
    assert majority_correct([s(True, "7"), s(False), s(False), s(False)]) == 1.0
    # a two-way tie that includes the correct answer scores 1/2, a three-way tie 1/3
    assert majority_correct([s(True, "7"), s(False, "8")]) == 0.5
    assert majority_correct([s(True, "7"), s(False, "8"), s(False, "9")]) == pytest.approx(1 / 3)
    # a tie among wrong answers above the correct one scores 0; no votes at all scores 0
    assert majority_correct([s(False, "8"), s(False, "8"), s(False, "9"), s(False, "9"), s(True, "7")]) == 0.0
    assert majority_correct([s(False), s(False)]) == 0.0


def hand_example():
    """Three problems, four samples each (values below computed by hand)."""
    return {
        # c = 2; maj: correct 2 votes vs "5" 1 vote -> 1
        "p1": [
            s(True, "7", 10, "stop"),
            s(True, "07", 20, "stop"),
            s(False, "5", 30, "stop"),
            s(False, None, 40, "length"),
        ],
        # c = 0; maj: "7" wins -> 0; one grading timeout
        "p2": [
            s(False, "7", 50, "stop"),
            s(False, "7", 60, "stop"),
            s(False, None, 70, "stop", reason="timeout"),
            s(False, None, 80, "length"),
        ],
        # c = 2; maj: 2 correct vs 2 x "3" -> tie -> 1/2
        "p3": [
            s(True, "1", 90, "stop"),
            s(False, "3", 100, "stop"),
            s(False, "3", 110, "stop"),
            s(True, "1", 120, "stop"),
        ],
    }


def test_bench_metrics_against_hand_computed_values():
    m = bench_metrics(hand_example())
    assert list(m) == list(METRIC_KEYS)
    assert m["k"] == 4 and m["problems"] == 3 and m["samples"] == 12
    assert m["mean@k"] == pytest.approx(100 / 3)
    assert m["pass@1"] == pytest.approx(100 / 3)
    # sampling-noise SE: sqrt((.25/3 + 0 + .25/3)) / 3
    assert m["mean@k_se"] == pytest.approx(100 * math.sqrt(1 / 6) / 3)
    # problem SE: stdev(.5, 0, .5) / sqrt(3) = sqrt(1/12) / sqrt(3) = 1/6
    assert m["mean@k_se_problems"] == pytest.approx(100 / 6)
    assert m["pass@k"] == pytest.approx(200 / 3)
    assert m["pass@k_curve"] == pytest.approx({"1": 100 / 3, "2": 500 / 9, "4": 200 / 3})
    assert m["maj@k"] == pytest.approx(50.0)
    assert m["length_mean"] == pytest.approx(65.0)
    assert m["length_median"] == pytest.approx(65.0)
    assert m["length_p95"] == pytest.approx(114.5)  # 110 + 0.45 * (120 - 110)
    assert m["truncation_rate"] == pytest.approx(2 / 12)
    assert m["no_answer_rate"] == pytest.approx(2 / 12)
    assert m["timeout_rate"] == pytest.approx(1 / 12)
    assert m["timeouts"] == 1  # counted, not only a rate


def test_unknown_lengths_and_single_samples_give_none():
    m = bench_metrics({"a": [s(True, "1")], "b": [s(False, "2")]})
    assert m["length_mean"] is None and m["truncation_rate"] is None and m["length_p95"] is None
    assert m["mean@k_se"] is None  # n = 1: sampling noise cannot be estimated
    assert m["mean@k_se_problems"] == pytest.approx(100 * math.sqrt(0.5) / math.sqrt(2))
    assert m["mean@k"] == 50.0 and m["pass@k"] == 50.0 and m["k"] == 1


def test_unequal_sample_counts_use_the_smallest_k():
    m = bench_metrics(
        {"a": [s(True, "1"), s(False, "2"), s(True, "1")], "b": [s(False, "2"), s(True, "1")], "c": []}
    )
    assert m["k"] == 2 and m["problems"] == 2 and m["samples"] == 5
    assert m["mean@k"] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2)
    assert m["pass@k"] == pytest.approx(100 * (pass_at_k(3, 2, 2) + pass_at_k(2, 1, 2)) / 2)


def test_bench_metrics_needs_samples():
    with pytest.raises(ValueError):
        bench_metrics({"a": []})


def test_average_is_the_unweighted_mean_with_totals_and_combined_se():
    a = bench_metrics(hand_example())
    b = bench_metrics(
        {"x": [s(True, "1", 5, "stop"), s(True, "1", 7, "stop")], "y": [s(False, "2", 9, "stop")] * 2}
    )
    avg = average_metrics({"a": a, "b": b})
    assert list(avg) == list(METRIC_KEYS)
    assert avg["mean@k"] == pytest.approx((a["mean@k"] + b["mean@k"]) / 2)
    assert avg["length_mean"] == pytest.approx((65.0 + 7.5) / 2)  # b: 5, 7, 9, 9
    assert avg["problems"] == 5 and avg["samples"] == 16 and avg["k"] == 2
    assert avg["timeouts"] == 1  # a total over benches, like problems and samples
    assert avg["mean@k_se"] == pytest.approx(math.sqrt(a["mean@k_se"] ** 2 + b["mean@k_se"] ** 2) / 2)
    # pass@k for the k every bench has (a: 1, 2, 4; b: 1, 2)
    assert avg["pass@k_curve"] == pytest.approx(
        {"1": (a["pass@1"] + 50) / 2, "2": (a["pass@k_curve"]["2"] + 50) / 2}
    )


def test_average_propagates_missing_values():
    with_lengths = bench_metrics({"x": [s(True, "1", 5, "stop"), s(False, "2", 6, "length")]})
    without = bench_metrics({"x": [s(True, "1"), s(False, "2")]})
    avg = average_metrics({"a": with_lengths, "b": without})
    assert avg["length_mean"] is None and avg["truncation_rate"] is None
    assert avg["mean@k"] == pytest.approx(50.0)


def test_per_problem_accuracy():
    assert per_problem_accuracy(hand_example()) == {"p1": 50.0, "p2": 0.0, "p3": 50.0}
