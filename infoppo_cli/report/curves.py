"""Aggregating runs for figures: the mean over seeds with a 95% confidence interval.

The interval is Student's t interval of the mean, ``mean ± t(0.975, n-1) · s / √n`` (s the sample
standard deviation): with the 2-5 seeds RL papers run, the normal 1.96 would understate it badly, and
a min-max band grows with the number of seeds instead of shrinking.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from infoppo_cli.report.health import Healths, final_accuracy, health_of, plotted_series, settled
from infoppo_cli.report.runs import RunData
from infoppo_cli.sweepdir.kinds import KINDS

KIND_SYMBOLS = {name: kind.symbol for name, kind in KINDS.items()}
"""Each sweep kind's symbol in legends and tables (``sweepdir/kinds.py``)."""


# Two-sided 95% critical values of Student's t for 1..30 degrees of freedom (any statistics table);
# beyond 30 the normal 1.96 is within 2%.
_T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_critical(degrees_of_freedom: int) -> float:
    """t(0.975, df): the half-width multiplier of a two-sided 95% interval."""
    if degrees_of_freedom < 1:
        raise ValueError("a confidence interval needs at least two samples")
    return _T_975[degrees_of_freedom - 1] if degrees_of_freedom <= len(_T_975) else 1.96


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its 95% t interval (0 for a single value). A NaN or
    an infinity among them makes the mean non-finite (NaN, or the infinity) and the half-width NaN: a
    seed that diverged is not averaged away."""
    mean = statistics.fmean(values)
    if not all(math.isfinite(value) for value in values):
        return mean, math.nan
    if len(values) < 2:
        return mean, 0.0
    return mean, t_critical(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


@dataclass
class Curve:
    """One line in a figure: a grid point (mean over its seeds) or a single run."""

    label: str
    arm: str
    color_key: str
    seeds: int
    steps: list[float]
    mean: list[float]
    half_width: list[float]
    """95% CI half-width at each step (0 everywhere for one seed)."""
    breaks: list[float] = field(default_factory=list)
    """Steps where the mean turns non-finite after a finite value (or starts so), and where a run of the
    curve broke: a run diverged there."""

    @property
    def low(self) -> list[float]:
        return [m - h for m, h in zip(self.mean, self.half_width, strict=True)]

    @property
    def high(self) -> list[float]:
        return [m + h for m, h in zip(self.mean, self.half_width, strict=True)]


def group_key(run: RunData) -> tuple[str, ...]:
    """Runs that differ only in their seed share a key."""
    if run.sweep is None:
        return ("", run.name)
    return (run.sweep, run.value_label or "", run.arm)


def group_label(run: RunData) -> str:
    """``γ=0.999 info`` for a sweep's grid point, the arm alone without a value; else the run's label
    (:func:`infoppo_cli.report.labels.label_runs`: its given name, or its method and settings)."""
    if run.sweep is None or run.kind is None:
        return run.label or run.name
    if not run.value_label:
        return run.arm
    return f"{KIND_SYMBOLS.get(run.kind, run.kind)}={run.value_label} {run.arm}"


def group_runs(runs: Sequence[RunData]) -> dict[tuple[str, ...], list[RunData]]:
    groups: dict[tuple[str, ...], list[RunData]] = {}
    for run in runs:
        groups.setdefault(group_key(run), []).append(run)
    return groups


def breaks_of(steps: Sequence[float], values: Sequence[float]) -> list[float]:
    """The steps where ``values`` turn non-finite after a finite value, or start non-finite."""
    finite = [math.isfinite(value) for value in values]
    return [step for i, step in enumerate(steps) if not finite[i] and (i == 0 or finite[i - 1])]


def _run_breaks(members: Sequence[RunData], healths: Healths | None) -> set[float]:
    """The steps the runs broke at (:func:`health.assess`), shown on every curve of theirs: an accuracy
    evaluated every N steps would otherwise end quietly before the break."""
    broke = (health_of(run, healths).break_step for run in members)
    return {step for step in broke if step is not None}


def build_curves(runs: Sequence[RunData], key: str, healths: Healths | None = None) -> list[Curve]:
    """Curves of ``key``, one per grid point: the mean over its seeds at the steps all of them logged.
    A seed's NaN (or a step a per-step metric went missing at) makes the mean NaN there: the line breaks.
    ``healths``: the runs' :func:`health.assess_all`, else each run is assessed here."""
    curves = []
    for members in group_runs([run for run in runs if run.series(key)]).values():
        per_seed = [dict(plotted_series(run, key)) for run in members]
        common = sorted(set.intersection(*(set(series) for series in per_seed)))
        if not common:  # seeds logged at different steps: fall back to the longest run
            longest = max(per_seed, key=len)
            per_seed, common = [longest], sorted(longest)
        stats = [mean_ci([series[step] for series in per_seed]) for step in common]
        breaks = {*breaks_of(common, [mean for mean, _ in stats]), *_run_breaks(members, healths)}
        head = members[0]
        curves.append(
            Curve(
                label=group_label(head),
                arm=head.arm,
                color_key=f"{head.sweep}:{head.value_label or head.arm}" if head.sweep else head.name,
                seeds=len(per_seed),
                steps=common,
                mean=[mean for mean, _ in stats],
                half_width=[half for _, half in stats],
                breaks=sorted(breaks),
            )
        )
    return curves


@dataclass
class Bar:
    """One bar of a final-accuracy figure: a grid point's mean over seeds, its CI and every seed."""

    value_label: str
    arm: str
    mean: float
    half_width: float
    seed_scores: list[float]


def final_accuracy_bars(runs: Sequence[RunData], bench: str, healths: Healths | None = None) -> list[Bar]:
    """A bar per (value, arm) with at least one final accuracy on ``bench``, in grid order; a seed's
    NaN score makes its bar's mean NaN (drawn as a marked gap, not as the other seeds' mean)."""
    bars = []
    for members in group_runs(runs).values():
        found = (settled(final_accuracy(run, health_of(run, healths), bench)[0]) for run in members)
        scores = [score for score in found if score is not None]
        if scores:
            mean, half = mean_ci(scores)
            bars.append(Bar(members[0].value_label or "", members[0].arm, mean, half, scores))
    return bars
