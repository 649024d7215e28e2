"""Evaluation statistics: mean@k with its standard error, unbiased pass@k, maj@k, lengths and rates.

Conventions, for m problems where problem i has n_i graded
samples of which c_i are correct and p_i = c_i / n_i:

* ``mean@k`` = mean_i p_i, in percent: InfoPPO's headline number (Mean@16), the unbiased estimate
  of pass@1 (so ``pass@1`` equals it when every problem has the same number of samples).
* ``mean@k_se`` is the standard error from sampling noise only, conditional on the benchmark's
  problems: ``sqrt(sum_i p_i (1 - p_i) / (n_i - 1)) / m``. It says how much mean@k would move if
  the same problems were sampled again. ``mean@k_se_problems`` = ``std_i(p_i) / sqrt(m)`` also
  covers the choice of problems. Both in percentage points; ``None`` when undefined (n = 1, m = 1).
* ``pass@k`` is the unbiased estimator ``1 - C(n - c, k) / C(n, k)`` averaged over problems, with
  k = the smallest n_i (16 in a standard run); ``pass@k_curve`` gives it for k = 1, 2, 4, ... .
* ``maj@k``: per problem, the samples' extracted answers vote. All samples the grader judged
  correct form one answer (each was verified equal to the gold); the other answers are grouped by
  their extracted text after light normalisation (whitespace, ``$``, a trailing period, leading
  zeros of integers). Samples with no extracted answer do not vote; a problem with no votes
  scores 0. A tie between the top answers scores 1/t if the correct answer is among the t tied
  ones (the expectation of breaking the tie uniformly at random), else 0.
* ``length_*`` are in generated tokens; ``truncation_rate`` is the fraction of samples that hit
  the token limit (``finish_reason == "length"``); ``no_answer_rate`` the fraction where the
  grader found no final answer (reason ``no_answer``); ``timeout_rate`` the fraction it gave up on
  (reason ``timeout``) and ``timeouts`` their number. Rates are fractions in
  [0, 1]; length and truncation are ``None`` when the samples do not record them.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infoppo_cli.grading.normalise import vote_key


@dataclass(frozen=True)
class GradedSample:
    """What the statistics need from one graded sample."""

    correct: bool
    extracted: str | None
    reason: str
    num_tokens: int | None = None
    finish_reason: str | None = None


# Keys every per-bench entry of metrics.json holds, in this order (the average has the same).
METRIC_KEYS: tuple[str, ...] = (
    "k",
    "mean@k",
    "mean@k_se",
    "mean@k_se_problems",
    "pass@1",
    "pass@k",
    "pass@k_curve",
    "maj@k",
    "length_mean",
    "length_median",
    "length_p95",
    "truncation_rate",
    "no_answer_rate",
    "timeout_rate",
    "timeouts",
    "problems",
    "samples",
)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of the chance that at least one of k samples is correct, given that c of n
    samples are correct: ``1 - C(n - c, k) / C(n, k)``, computed as a stable product."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_at_k_ladder(k_max: int) -> list[int]:
    """k = 1, 2, 4, ... up to ``k_max``, plus ``k_max`` itself."""
    ks = [1 << i for i in range(k_max.bit_length()) if 1 << i <= k_max]
    return ks if ks[-1] == k_max else [*ks, k_max]


_CORRECT_VOTE = "\0correct"


def majority_correct(samples: Sequence[GradedSample]) -> float:
    """maj@k credit of one problem (1, 0 or 1/t for a t-way tie that includes the correct answer)."""
    votes = Counter(
        _CORRECT_VOTE if s.correct else vote_key(s.extracted) for s in samples if s.extracted is not None
    )
    if not votes:
        return 0.0
    top = max(votes.values())
    tied = [answer for answer, count in votes.items() if count == top]
    return 1.0 / len(tied) if _CORRECT_VOTE in tied else 0.0


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 100]."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bench_metrics(problems: Mapping[str, Sequence[GradedSample]]) -> dict[str, Any]:
    """Every statistic of one benchmark, from its problems' graded samples (see module docstring).

    Problems without samples are ignored; accuracy-like values are percentages.
    """
    per_problem = [list(samples) for samples in problems.values() if samples]
    if not per_problem:
        raise ValueError("no graded samples to compute metrics from")
    m = len(per_problem)
    n = [len(samples) for samples in per_problem]
    c = [sum(s.correct for s in samples) for samples in per_problem]
    p = [ci / ni for ci, ni in zip(c, n, strict=True)]
    k = min(n)
    everything = [s for samples in per_problem for s in samples]
    lengths = [s.num_tokens for s in everything if s.num_tokens is not None]
    finishes = [s.finish_reason for s in everything if s.finish_reason is not None]

    if all(ni > 1 for ni in n):
        se = math.sqrt(sum(pi * (1 - pi) / (ni - 1) for pi, ni in zip(p, n, strict=True))) / m
    else:
        se = None
    se_problems = statistics.stdev(p) / math.sqrt(m) if m > 1 else None

    def mean_pass_at(kk: int) -> float:
        return 100 * sum(pass_at_k(ni, ci, kk) for ni, ci in zip(n, c, strict=True)) / m

    return {
        "k": k,
        "mean@k": 100 * sum(p) / m,
        "mean@k_se": None if se is None else 100 * se,
        "mean@k_se_problems": None if se_problems is None else 100 * se_problems,
        "pass@1": mean_pass_at(1),
        "pass@k": mean_pass_at(k),
        "pass@k_curve": {str(kk): mean_pass_at(kk) for kk in pass_at_k_ladder(k)},
        "maj@k": 100 * sum(majority_correct(samples) for samples in per_problem) / m,
        "length_mean": _mean(lengths),
        "length_median": statistics.median(lengths) if lengths else None,
        "length_p95": _percentile(lengths, 95) if lengths else None,
        "truncation_rate": _mean(1.0 if f == "length" else 0.0 for f in finishes),
        "no_answer_rate": sum(s.reason == "no_answer" for s in everything) / len(everything),
        "timeout_rate": sum(s.reason == "timeout" for s in everything) / len(everything),
        "timeouts": sum(s.reason == "timeout" for s in everything),
        "problems": m,
        "samples": len(everything),
    }


def average_metrics(benches: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The "Average" row: the unweighted mean over benches (as in InfoPPO's results tables).

    Exceptions: ``problems``, ``samples`` and ``timeouts`` are totals; ``k`` is the smallest k; the standard
    errors are those of the mean of independent bench estimates, ``sqrt(sum se_b^2) / B``; a
    value missing (``None``) in any bench is ``None`` in the average.
    """
    if not benches:
        raise ValueError("no benches to average")
    rows = list(benches.values())
    average: dict[str, Any] = {}
    for key in METRIC_KEYS:
        values = [row[key] for row in rows]
        if key in ("problems", "samples", "timeouts"):
            average[key] = sum(values)
        elif key == "k":
            average[key] = min(values)
        elif key == "pass@k_curve":
            shared = set.intersection(*(set(v) for v in values))
            average[key] = {kk: _mean(v[kk] for v in values) for kk in sorted(shared, key=int)}
        elif any(v is None for v in values):
            average[key] = None
        elif key.startswith("mean@k_se"):
            average[key] = math.sqrt(sum(v * v for v in values)) / len(values)
        else:
            average[key] = _mean(values)
    return average


def per_problem_accuracy(problems: Mapping[str, Sequence[GradedSample]]) -> dict[str, float]:
    """Percent correct per problem id (problems without samples left out)."""
    return {
        pid: 100 * sum(s.correct for s in samples) / len(samples)
        for pid, samples in problems.items()
        if samples
    }
