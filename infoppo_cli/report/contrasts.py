"""Pre-registered paired contrasts (``infoppo report --contrasts FILE.toml``): two arms of runs, paired by
seed, compared on three metrics of their in-training accuracy curve fixed before any run.

The file holds ``[[contrasts]]`` tables, each with a ``name``, arms ``a`` and ``b`` (``method``, and
optionally ``gamma`` and ``lambd``, matched within :data:`MATCH_TOLERANCE` of the values the run
trained with), optionally the ``bench`` (default: the runs' one in-training benchmark) and the
``curve``, the per-step record the metrics are read from (default: ``eval_<bench>``, the held-out
accuracy; ``response_length_mean``, say, compares lengths, each step's being its last value), and the
``x`` axis it is read against: ``steps`` (the default) or ``responses`` (responses generated, for methods
whose steps cost different numbers of responses; see :func:`budget_metrics`). An unknown
key in a contrast or an arm is refused; the file's other top-level tables are ignored (a benchmark
script may keep its stages there). Per contrast, the seeds with a run in both arms are paired (a seed
matched by two runs of one arm is refused), and per metric (:data:`METRICS`) the per-seed differences
a − b get their mean and a 95% t interval over seeds (n − 1 degrees of freedom; no interval below two
seeds). Each arm gets, over the paired seeds, each metric's mean ± standard error, and the mean over
seeds of its last step's response length, Γ_info and γ^T.
"""

from __future__ import annotations

import math
import statistics
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.report.axis import X_AXES, on_responses_axis
from infoppo_cli.report.curves import mean_ci
from infoppo_cli.report.runs import RunData
from infoppo_cli.report.tables import eval_benches_of

MATCH_TOLERANCE = 1e-9
CONTRAST_KEYS = ("name", "a", "b", "bench", "curve", "x")
ARM_KEYS = ("method", "gamma", "lambd")
BUDGET_FRACTIONS = (2 / 3, 5 / 6, 1.0)
"""On the responses axis, ``last3`` reads the curve at these fractions of the common budget: where the
step metric reads a 30-step run's last three evals (steps 20, 25, 30)."""
METRICS: dict[str, str] = {
    "last": "accuracy at the last eval",
    "last3": "mean accuracy of the last 3 evals",
    "auc": "area under accuracy against step over the step span (mean accuracy over training)",
}
"""The pre-registered metrics of a run's in-training accuracy curve (%) and what each is."""
ARM_EXTRAS = (
    ("length", "response_length_mean"),
    ("Gamma_info", "info_discount_mean"),
    ("gamma^T", "token_discount_mean"),
)
"""Per arm, the mean over seeds of these last-step metrics, beside the accuracy metrics."""


@dataclass(frozen=True)
class Arm:
    """The runs of one side of a contrast: a method, optionally at a γ and a λ."""

    method: str
    gamma: float | None = None
    lambd: float | None = None

    def matches(self, run: RunData) -> bool:
        if run.method != self.method:
            return False
        for name, wanted in (("gamma", self.gamma), ("lambd", self.lambd)):
            trained = run.trained(name)
            if wanted is None:
                continue
            if isinstance(trained, bool) or not isinstance(trained, int | float):
                return False
            if abs(float(trained) - wanted) > MATCH_TOLERANCE:
                return False
        return True

    def __str__(self) -> str:
        settings = [
            f"{symbol}={value:g}"
            for symbol, value in (("γ", self.gamma), ("λ", self.lambd))
            if value is not None
        ]
        return " ".join([self.method, *settings])


@dataclass(frozen=True)
class Contrast:
    name: str
    a: Arm
    b: Arm
    bench: str | None = None
    curve: str | None = None
    """The per-step record compared (``None``: the held-out accuracy, ``eval_<bench>``)."""
    x: str = "steps"
    """The axis the curves are read against: ``steps``, or ``responses`` (generated, up to each step)."""

    def curve_key(self, bench: str) -> str:
        return self.curve or f"eval_{bench}"


def read_contrasts(path: str | Path) -> list[Contrast]:
    """The ``[[contrasts]]`` of the TOML file ``path``; a missing file, bad TOML, no contrasts or a
    malformed one is a :class:`UsageError` naming the file (and the contrast and key)."""
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--contrasts {path}: cannot read it ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--contrasts {path} is not valid TOML: {exc}") from None
    return parse_contrasts(document, str(path))


def parse_contrasts(document: dict[str, Any], source: str) -> list[Contrast]:
    """The contrasts of a parsed TOML ``document`` (see :func:`read_contrasts`)."""
    tables = document.get("contrasts")
    if not isinstance(tables, list) or not tables or not all(isinstance(table, dict) for table in tables):
        raise UsageError(f"{source} has no [[contrasts]] tables (each with name, a and b)")
    contrasts: list[Contrast] = []
    for index, table in enumerate(tables):
        name = table.get("name")
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"{source}: contrast {index + 1} needs a name (a string)")
        where = f"{source}: contrast {name!r}"
        _refuse_unknown(table, CONTRAST_KEYS, where)
        if any(contrast.name == name for contrast in contrasts):
            raise UsageError(f"{where} is named twice")
        bench, curve = table.get("bench"), table.get("curve")
        for key, value in (("bench", bench), ("curve", curve)):
            if value is not None and (not isinstance(value, str) or not value):
                raise UsageError(f"{where}: {key} must be a non-empty string")
        x = table.get("x", "steps")
        if x not in X_AXES:
            raise UsageError(f"{where}: x must be one of {', '.join(map(repr, X_AXES))}, got {x!r}")
        arms = _arm(table.get("a"), f"{where}, arm a"), _arm(table.get("b"), f"{where}, arm b")
        contrasts.append(Contrast(name, *arms, bench, curve, x))
    return contrasts


def _refuse_unknown(table: dict[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = [key for key in table if key not in allowed]
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}"
        )


def _arm(table: Any, where: str) -> Arm:
    if not isinstance(table, dict):
        raise UsageError(f"{where} is missing or not a table (method, and optionally gamma and lambd)")
    _refuse_unknown(table, ARM_KEYS, where)
    method = table.get("method")
    if not isinstance(method, str) or not method:
        raise UsageError(f"{where} needs a method (a string)")
    values = {}
    for name in ("gamma", "lambd"):
        value = table.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise UsageError(f"{where}: {name} must be a number, got {value!r}")
        values[name] = None if value is None else float(value)
    return Arm(method, **values)


# -- results -----------------------------------------------------------------------------------------


def curve_metrics(series: Sequence[tuple[float, float]]) -> dict[str, float | None]:
    """:data:`METRICS` of an accuracy curve of (step, accuracy) pairs in step order; a metric the curve
    is too short for (3 evals for ``last3``, 2 for ``auc``) is ``None``."""
    values = [value for _, value in series]
    area = None
    if len(series) >= 2 and series[-1][0] > series[0][0]:
        pairs = zip(series, series[1:], strict=False)
        trapezoids = sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in pairs)
        area = trapezoids / (series[-1][0] - series[0][0])
    return {
        "last": values[-1] if values else None,
        "last3": statistics.fmean(values[-3:]) if len(values) >= 3 else None,
        "auc": area,
    }


def _interpolate(series: Sequence[tuple[float, float]], x: float) -> float:
    """The curve's value at ``x`` (within its span), linear between its points."""
    for (x0, y0), (x1, y1) in zip(series, series[1:], strict=False):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return series[-1][1]


def budget_metrics(series: Sequence[tuple[float, float]], budget: float) -> dict[str, float | None]:
    """:data:`METRICS` of a curve of (responses generated, accuracy) pairs read up to a common ``budget``
    of responses (at most the curve's own span), interpolating linearly between its evals: ``last`` at
    the budget, ``last3`` the mean at :data:`BUDGET_FRACTIONS` of it, ``auc`` the mean over the span from
    the first point to the budget. Below two points, or a budget at the first point, all are ``None``."""
    if len(series) < 2 or budget <= series[0][0]:
        return dict.fromkeys(METRICS)
    budget = min(budget, series[-1][0])
    inside = [point for point in series if point[0] < budget] + [(budget, _interpolate(series, budget))]
    return {
        "last": inside[-1][1],
        "last3": statistics.fmean(_interpolate(series, f * budget) for f in BUDGET_FRACTIONS),
        "auc": curve_metrics(inside)["auc"],
    }


@dataclass
class Difference:
    """One metric of one contrast: the per-seed differences a − b and their mean with a 95% t interval."""

    metric: str
    seeds: list[int]
    differences: list[float]

    @property
    def n(self) -> int:
        return len(self.differences)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.differences) if self.differences else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% t interval of the mean (``None`` below two seeds)."""
        if self.n < 2:
            return None
        mean, half = mean_ci(self.differences)
        return mean - half, mean + half


@dataclass
class ArmSummary:
    """One arm over the paired seeds."""

    arm: Arm
    runs: list[str]
    metrics: dict[str, tuple[float | None, float | None]]
    """Metric -> (mean, standard error; ``None`` below two seeds)."""
    extras: dict[str, float | None]
    """:data:`ARM_EXTRAS` -> the mean over seeds of the run's last logged value."""


@dataclass
class ContrastResult:
    contrast: Contrast
    bench: str
    differences: list[Difference]
    a: ArmSummary
    b: ArmSummary
    notes: list[str] = field(default_factory=list)
    """What left seeds out (no run in one arm, a curve too short for a metric)."""


def in_training_benches(runs: Sequence[RunData], benches_file: str | Path | None = None) -> list[str]:
    """The benchmarks with an in-training accuracy curve in some run."""
    return [
        bench
        for bench in eval_benches_of(runs, benches_file)
        if any(run.series(f"eval_{bench}") for run in runs)
    ]


def contrast_results(
    runs: Sequence[RunData], contrasts: Sequence[Contrast], benches_file: str | Path | None = None
) -> list[ContrastResult]:
    """Every contrast of ``contrasts`` over ``runs`` (see the module). A contrast without a ``bench``
    when the runs have more or fewer than one in-training benchmark, or a seed matched by two runs of
    one arm, is a :class:`UsageError`."""
    found = in_training_benches(runs, benches_file)
    return [_result(runs, contrast, _bench(contrast, found)) for contrast in contrasts]


def _bench(contrast: Contrast, found: Sequence[str]) -> str:
    if contrast.bench is not None:
        return contrast.bench
    if contrast.curve is not None and len(found) != 1:
        return "-"  # the curve is not a benchmark's accuracy
    if len(found) != 1:
        having = f"{len(found)} ({', '.join(found)})" if found else "none"
        raise UsageError(
            f"contrast {contrast.name!r} names no bench and the runs' in-training benchmarks are {having}: "
            'add bench = "..." to it'
        )
    return found[0]


def _by_seed(runs: Sequence[RunData], arm: Arm, contrast: Contrast, side: str) -> dict[int, RunData]:
    chosen: dict[int, RunData] = {}
    for run in runs:
        if not arm.matches(run) or run.seed is None:
            continue
        if run.seed in chosen:
            first = chosen[run.seed]
            raise UsageError(
                f"contrast {contrast.name!r}: seed {run.seed} of arm {side} ({arm}) is matched by two runs, "
                f"{_where(first)} and {_where(run)}; give the arm a gamma or lambd that tells them apart, or "
                "report the runs of one experiment"
            )
        chosen[run.seed] = run
    return chosen


def _where(run: RunData) -> str:
    return f"{run.sweep}/{run.name}" if run.sweep else run.name


def _result(runs: Sequence[RunData], contrast: Contrast, bench: str) -> ContrastResult:
    sides = {
        side: _by_seed(runs, arm, contrast, side) for side, arm in (("a", contrast.a), ("b", contrast.b))
    }
    seeds = sorted(set(sides["a"]) & set(sides["b"]))
    unpaired = {side: sorted(set(chosen) - set(seeds)) for side, chosen in sides.items()}
    notes = [
        f"{contrast.name}: seed(s) {', '.join(map(str, left))} of arm {side} have no run in the other arm "
        "and are left out"
        for side, left in unpaired.items()
        if left
    ]
    if not seeds:
        notes.append(f"{contrast.name}: no seed has a run in both arms")
    key = contrast.curve_key(bench)
    if contrast.x == "responses":
        metrics = _metrics_at_common_budget(sides, seeds, key, notes)
    else:
        metrics = {
            side: {seed: curve_metrics(sides[side][seed].series(key)) for seed in seeds} for side in sides
        }
    differences = []
    for metric in METRICS:
        paired = [
            (seed, a - b)
            for seed in seeds
            if (a := metrics["a"][seed][metric]) is not None and (b := metrics["b"][seed][metric]) is not None
        ]
        if len(paired) < len(seeds):
            notes.append(
                f"{contrast.name}: {len(seeds) - len(paired)} seed(s) have no {metric} of {key} in an arm"
            )
        differences.append(Difference(metric, [seed for seed, _ in paired], [value for _, value in paired]))
    summaries = [
        _summary(arm, [sides[side][seed] for seed in seeds], metrics[side])
        for side, arm in (("a", contrast.a), ("b", contrast.b))
    ]
    return ContrastResult(contrast, bench, differences, summaries[0], summaries[1], notes)


def _metrics_at_common_budget(
    sides: dict[str, dict[int, RunData]], seeds: Sequence[int], key: str, notes: list[str]
) -> dict[str, dict[int, dict[str, float | None]]]:
    """Per side and seed, :func:`budget_metrics` of the curve against responses generated, at the seed's
    common budget (the smaller of its two runs' last points)."""
    metrics: dict[str, dict[int, dict[str, float | None]]] = {side: {} for side in sides}
    for seed in seeds:
        curves = {}
        for side in sides:
            moved = on_responses_axis([sides[side][seed]], notes)
            curves[side] = moved[0].series(key) if moved else []
        budget = min((curve[-1][0] for curve in curves.values() if curve), default=0.0)
        for side, curve in curves.items():
            metrics[side][seed] = budget_metrics(curve, budget) if curve else dict.fromkeys(METRICS)
    return metrics


def _mean_se(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    mean = statistics.fmean(values)
    if len(values) < 2 or not all(math.isfinite(value) for value in values):
        return mean, None
    return mean, statistics.stdev(values) / math.sqrt(len(values))


def _summary(arm: Arm, runs: Sequence[RunData], metrics: dict[int, dict[str, float | None]]) -> ArmSummary:
    per_metric = {
        metric: _mean_se([value for values in metrics.values() if (value := values[metric]) is not None])
        for metric in METRICS
    }
    extras = {}
    for name, key in ARM_EXTRAS:
        lasts = [value for run in runs if (value := run.last(key)) is not None]
        extras[name] = statistics.fmean(lasts) if lasts else None
    return ArmSummary(arm, [_where(run) for run in runs], per_metric, extras)
