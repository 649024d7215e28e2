"""Tables and numbers from the clocks: ``tokens.parquet`` (one row per token), InfoPPO's Figure 2
ranking (``top_tokens.csv``) and ``summary.json``'s statistics, clock drift included."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from infoppo_cli.inspect.clock import Clock
from infoppo_cli.inspect.settings import PAPER_MIN_COUNT

PERCENTILES = (10, 25, 50, 75, 90, 99)
CLOCK_COLUMNS = ("entropy", "rho", "gamma_info", "clip_low", "clip_high")
COMPARED_COLUMNS = ("entropy", "rho", "gamma_info")


@dataclass(frozen=True)
class Inspected:
    """One response with its token texts and clocks (``compared``: the second model's, if any)."""

    id: str
    tokens: list[str]
    clock: Clock
    correct: bool | None = None
    compared: Clock | None = None


def token_table(responses: Sequence[Inspected]) -> pa.Table:
    """One row per response token: ``id``, ``position``, ``token`` and the clock columns; with a
    second model also ``entropy_compare``, ``rho_compare``, ``gamma_info_compare`` and
    ``entropy_drift`` (its entropy minus the first model's)."""
    lengths = [len(r.tokens) for r in responses]
    columns: dict[str, object] = {
        "id": pa.array(np.repeat([r.id for r in responses], lengths).tolist(), pa.string()),
        "position": pa.array(np.concatenate([np.arange(n) for n in lengths] or [[]]).astype(np.int32)),
        "token": pa.array([t for r in responses for t in r.tokens], pa.string()),
    }
    for name in CLOCK_COLUMNS:
        columns[name] = _column(getattr(r.clock, name) for r in responses)
    if responses and responses[0].compared is not None:
        for name in COMPARED_COLUMNS:
            columns[f"{name}_compare"] = _column(getattr(r.compared, name) for r in responses)
        columns["entropy_drift"] = pc.subtract(columns["entropy_compare"], columns["entropy"])
    return pa.table(columns)


def _column(tensors) -> pa.Array:
    parts = [t.numpy().astype(np.float32) for t in tensors]
    return pa.array(np.concatenate(parts) if parts else np.zeros(0, np.float32))


def token_stats(table: pa.Table) -> pa.Table:
    """One row per distinct token of :func:`token_table`: ``token``, ``entropy_count`` (how often it
    occurs), ``entropy_mean`` and ``rho_mean``; what :func:`figure_min_count` and :func:`top_tokens` read."""
    return table.group_by("token").aggregate([("entropy", "mean"), ("entropy", "count"), ("rho", "mean")])


def figure_min_count(stats: pa.Table, top: int, given: int | None) -> tuple[int, str | None]:
    """The count a token needs to enter Figure 2, and what a reader should know about it
    (``stats``: :func:`token_stats`).

    Given: that count, with a note when no token reaches it. Not given: InfoPPO's 100, lowered on
    a file too small for ``top`` tokens to reach it, down to the count of its ``top``-th most
    frequent token (and the note says so)."""
    counts = sorted(stats["entropy_count"].to_pylist(), reverse=True)
    most = counts[0] if counts else 0
    tokens = f"{sum(counts):,} tokens, the most frequent seen {_times(most)}"
    if given is not None:
        if most >= given:
            return given, None
        return given, (
            f"no token is seen {given} times (--min-count) in {tokens}: top_tokens.csv and Figure 2 are "
            "empty; lower --min-count"
        )
    reached = counts[min(top, len(counts)) - 1] if counts else 1
    threshold = max(1, min(PAPER_MIN_COUNT, reached))
    if threshold == PAPER_MIN_COUNT:
        return threshold, None
    return threshold, (
        f"Figure 2 counts tokens seen at least {_times(threshold)}, not InfoPPO's {PAPER_MIN_COUNT}: "
        f"the file is small ({tokens}); pass --min-count to choose"
    )


def _times(count: int) -> str:
    return f"{count} time" if count == 1 else f"{count} times"


def top_tokens(stats: pa.Table, top: int, min_count: int) -> pa.Table:
    """InfoPPO's Figure 2: the ``top`` tokens with the highest and with the lowest mean entropy among
    tokens seen at least ``min_count`` times (InfoPPO's Figure 2: 100 each, more than 100 occurrences), from
    :func:`token_stats`.

    Columns ``list`` (``high``/``low``), ``rank`` (1 = most extreme), ``token``, ``count``,
    ``mean_entropy``, ``mean_rho``.
    """
    grouped = stats.filter(pc.greater_equal(stats["entropy_count"], min_count))
    parts = []
    for name, order in (("high", "descending"), ("low", "ascending")):
        ranked = grouped.sort_by([("entropy_mean", order), ("token", "ascending")]).slice(0, top)
        n = ranked.num_rows
        parts.append(
            pa.table(
                {
                    "list": pa.array([name] * n, pa.string()),
                    "rank": pa.array(np.arange(1, n + 1, dtype=np.int32)),
                    "token": ranked["token"],
                    "count": ranked["entropy_count"],
                    "mean_entropy": ranked["entropy_mean"],
                    "mean_rho": ranked["rho_mean"],
                }
            )
        )
    return pa.concat_tables(parts)


def distribution(values: np.ndarray) -> dict[str, float | None]:
    """Mean, percentiles and maximum of ``values`` (``None`` for an empty array)."""
    if values.size == 0:
        return {"mean": None, **{f"p{q}": None for q in PERCENTILES}, "max": None}
    points = np.percentile(values.astype(np.float64), PERCENTILES)
    return {
        "mean": float(values.mean(dtype=np.float64)),
        **{f"p{q}": float(v) for q, v in zip(PERCENTILES, points, strict=True)},
        "max": float(values.max()),
    }


def clock_summary(clocks: Sequence[Clock]) -> dict[str, object]:
    """Token count, entropy and rho distributions, the share of tokens with rho > 0.5 and the mean
    discount of a response in both clocks, Gamma_info(0, T) and gamma ** T."""
    entropy = np.concatenate([c.entropy.numpy() for c in clocks] or [np.zeros(0)])
    rho = np.concatenate([c.rho.numpy() for c in clocks] or [np.zeros(0)])
    return {
        "tokens": int(entropy.size),
        "entropy": distribution(entropy),
        "rho": distribution(rho),
        "rho_above_half": float((rho > 0.5).mean()) if rho.size else None,
        "gamma_info_T_mean": float(np.mean([c.discount for c in clocks])) if clocks else None,
        "gamma_token_T_mean": float(np.mean([c.token_discount for c in clocks])) if clocks else None,
    }


def clock_drift(responses: Sequence[Inspected]) -> dict[str, object]:
    """How the second model's clock differs from the first's on the same tokens: the per-token entropy
    difference (second minus first, nats), its absolute size, the per-token change of rho, and the
    per-response change of elapsed information time (sum of rho) and of Gamma_info(0, T)."""
    pairs = [(r.clock, r.compared) for r in responses if r.compared is not None]
    diff = np.concatenate([(b.entropy - a.entropy).numpy() for a, b in pairs] or [np.zeros(0)])
    rho_diff = np.concatenate([(b.rho - a.rho).numpy() for a, b in pairs] or [np.zeros(0)])
    elapsed = np.array([float(b.rho.sum() - a.rho.sum()) for a, b in pairs])
    discount = np.array([b.discount - a.discount for a, b in pairs])
    return {
        "entropy_diff": distribution(diff),
        "entropy_abs_diff_mean": float(np.abs(diff).mean()) if diff.size else None,
        "rho_abs_diff_mean": float(np.abs(rho_diff).mean()) if rho_diff.size else None,
        "info_time_diff_per_response": distribution(elapsed),
        "gamma_info_T_diff_mean": float(discount.mean()) if discount.size else None,
    }
