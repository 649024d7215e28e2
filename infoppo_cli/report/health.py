"""Broken runs: a metric that turned NaN or infinite, or stopped being logged while training went on.

Both are data the report shows rather than hides. The table shows the last step's value as it is (NaN,
never an earlier finite value) and marks a value from before the break with the step it comes from; the
curves break where the values do; the warnings and ``report.md`` name the run and the step.

A per-step metric that stops being logged while later steps exist is what a writer that drops non-finite
values leaves behind when a run diverges, so it is reported as a likely divergence at the first step
that lacks it. The metrics watched are the trainer's per-step diagnostics (``STEP_METRICS``), each once it
was logged at two consecutive steps from its first one (so one that appears only now and then is not
taken for a break).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infoppo_cli.openrlhf_adapter.metrics_log import STEP_METRICS
from infoppo_cli.report.runs import RunData

PER_STEP_KEYS: tuple[str, ...] = tuple(STEP_METRICS)
"""The metrics the trainer logs at every step: one that stops while steps go on marks a break."""
_SHOWN_KEYS = 4


@dataclass(frozen=True)
class Stale:
    """A table value from before its run broke: shown with the step it comes from."""

    value: float
    step: float


@dataclass(frozen=True)
class Health:
    """Where one run broke, if it did."""

    run: str
    last_step: float | None
    nonfinite_at: float | None = None
    """The first step with a non-finite value of any metric."""
    nonfinite_keys: tuple[str, ...] = ()
    """The metrics that were not finite at that step."""
    nonfinite_kind: str = ""
    """``NaN``, ``infinite`` or ``NaN/infinite``: what those values were."""
    nonfinite_last: float | None = None
    """The last step holding a non-finite value."""
    nonfinite_steps: int = 0
    missing_from: float | None = None
    """The first step that lacks a per-step metric logged before it."""
    missing_keys: tuple[str, ...] = ()
    eval_nonfinite: tuple[str, ...] = ()
    """Benchmarks whose final eval Mean@k is not finite."""

    @property
    def break_step(self) -> float | None:
        steps = [step for step in (self.nonfinite_at, self.missing_from) if step is not None]
        return min(steps) if steps else None

    @property
    def broken(self) -> bool:
        return self.break_step is not None or bool(self.eval_nonfinite)

    def mark(self, logged: tuple[float, float] | None) -> float | Stale | None:
        """A table value: ``logged`` = (step, value) as :meth:`RunData.last_logged` gives it. A finite value
        from before the break of a run that went on past it is :class:`Stale`."""
        if logged is None:
            return None
        step, value = logged
        broke = self.break_step
        if broke is not None and step < broke and math.isfinite(value):
            return Stale(value, step)
        return value


FINISHED_STATUSES = ("finished", "done")
"""A run's status (its manifest's, or its sweep's) once it has run to its end."""


@dataclass(frozen=True)
class NotLastEval:
    """An in-training accuracy that is not the run's last eval: an earlier step's, or one of a run that
    failed, was interrupted or is still going. Shown with its step and the run's status."""

    value: float
    step: float
    status: str | None = None
    """The run's status when it did not finish (``failed``, ``interrupted``, ``running``)."""


def settled(value: float | Stale | NotLastEval | None) -> float | None:
    """A table value for averaging: a :class:`Stale` one is not the run's final value, so NaN; a
    :class:`NotLastEval` one is its number."""
    if isinstance(value, NotLastEval):
        return value.value
    return math.nan if isinstance(value, Stale) else value


def final_accuracy(
    run: RunData, health: Health, bench: str
) -> tuple[float | Stale | NotLastEval | None, str]:
    """:meth:`RunData.final_accuracy`, with an in-training score from before the run broke marked, and
    one that is not the run's last eval marked with its step (:class:`NotLastEval`)."""
    score, source = run.final_accuracy(bench)
    if source != "training":
        return score, source
    logged = run.last_logged(f"eval_{bench}")
    marked = health.mark(logged)
    if logged is None or isinstance(marked, Stale):
        return marked, source
    step, value = logged
    unfinished = run.status is not None and run.status not in FINISHED_STATUSES
    last_step = run.steps[-1]["step"] if run.steps else step
    if step < last_step or unfinished:
        return NotLastEval(value, step, run.status if unfinished else None), source
    return value, source


def missing_steps(run: RunData, key: str) -> list[float]:
    """The steps after a per-step metric's first one that lack it (see the module docstring)."""
    present = [key in row for row in run.steps]
    if True not in present:
        return []
    first = present.index(True)
    if first + 1 >= len(present) or not present[first + 1]:
        return []
    return [row["step"] for row, here in zip(run.steps[first:], present[first:], strict=True) if not here]


def _kind(values: Sequence[float]) -> str:
    kinds = {"NaN" if math.isnan(value) else "infinite" for value in values}
    return "/".join(sorted(kinds))


def assess(run: RunData, per_step_keys: Sequence[str] = PER_STEP_KEYS) -> Health:
    """Where ``run`` broke: its first non-finite value (any metric), the first step missing one of
    ``per_step_keys`` once logged, and non-finite final eval scores."""
    scores = {bench: run.eval_score(bench) for bench in run.eval_benches}
    return Health(
        run=run.name,
        last_step=run.steps[-1]["step"] if run.steps else None,
        **_nonfinite_fields(run),
        **_missing_fields(run, per_step_keys),
        eval_nonfinite=tuple(b for b, s in scores.items() if s is not None and not math.isfinite(s)),
    )


Healths = Mapping[int, Health]
"""Each run's :func:`assess`, keyed by ``id(run)``: a report assesses each of its runs once."""


def assess_all(runs: Iterable[RunData]) -> dict[int, Health]:
    """:func:`assess` of every run, keyed by ``id(run)`` (read with :func:`health_of`)."""
    return {id(run): assess(run) for run in runs}


def health_of(run: RunData, healths: Healths | None) -> Health:
    """``run``'s entry in ``healths``, or :func:`assess` of it when there are none."""
    return assess(run) if healths is None else healths[id(run)]


def _nonfinite_fields(run: RunData) -> dict[str, Any]:
    bad_steps = []
    for row in run.steps:
        bad = {key: value for key, value in row.items() if key != "step" and not math.isfinite(value)}
        if bad:
            bad_steps.append((row["step"], bad))
    if not bad_steps:
        return {}
    first_step, first_bad = bad_steps[0]
    return {
        "nonfinite_at": first_step,
        "nonfinite_keys": tuple(first_bad),
        "nonfinite_kind": _kind(list(first_bad.values())),
        "nonfinite_last": bad_steps[-1][0],
        "nonfinite_steps": len(bad_steps),
    }


def _missing_fields(run: RunData, per_step_keys: Sequence[str]) -> dict[str, Any]:
    gaps = {key: steps[0] for key in per_step_keys if (steps := missing_steps(run, key))}
    if not gaps:
        return {}
    first_gap = min(gaps.values())
    return {"missing_from": first_gap, "missing_keys": tuple(k for k, s in gaps.items() if s == first_gap)}


def _keys(keys: Sequence[str]) -> str:
    shown = ", ".join(keys[:_SHOWN_KEYS])
    return shown + (f" and {len(keys) - _SHOWN_KEYS} more" if len(keys) > _SHOWN_KEYS else "")


def _step(step: float | None) -> str:
    return "-" if step is None else f"{step:g}"


def health_notes(health: Health) -> list[str]:
    """One warning per way ``health``'s run broke, naming the run, the step and the metrics."""
    notes = []
    if health.nonfinite_at is not None:
        if health.nonfinite_last == health.last_step:
            extent = f"non-finite to the last step ({_step(health.last_step)})"
        else:
            extent = f"non-finite values at {health.nonfinite_steps} step(s), the last at step "
            extent += _step(health.nonfinite_last)
        notes.append(
            f"{health.run}: diverged at step {_step(health.nonfinite_at)}: {_keys(health.nonfinite_keys)} "
            f"turned {health.nonfinite_kind}; {extent}. The table shows these values as they are, the "
            "curves break there"
        )
    if health.missing_from is not None:
        notes.append(
            f"{health.run}: {_keys(health.missing_keys)} not logged from step {_step(health.missing_from)} "
            f"though the run logged steps up to {_step(health.last_step)} (a writer that drops NaN/inf "
            f"leaves such gaps): it likely diverged at step {_step(health.missing_from)}; table values "
            "from before that step are marked with their step"
        )
    if health.eval_nonfinite:
        notes.append(
            f"{health.run}: the final eval's Mean@k is not finite for {_keys(health.eval_nonfinite)}"
        )
    return notes


def broken_runs_markdown(healths: Sequence[Health]) -> list[str]:
    """``report.md``'s table of broken runs (empty when none broke)."""
    broken = [health for health in healths if health.broken]
    if not broken:
        return []
    lines = [
        "| run | broke at step | last step | non-finite | not logged any more | eval Mean@k not finite |",
        "|---|---:|---:|---|---|---|",
    ]
    for health in broken:
        nonfinite = (
            f"{_keys(health.nonfinite_keys)} ({health.nonfinite_kind})" if health.nonfinite_keys else "-"
        )
        cells = [
            health.run,
            _step(health.break_step),
            _step(health.last_step),
            nonfinite,
            _keys(health.missing_keys) or "-",
            _keys(health.eval_nonfinite) or "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def plotted_series(run: RunData, key: str) -> list[tuple[float, float]]:
    """``run``'s series of ``key`` with NaN at the steps that lack it after it was logged every step, so
    a line breaks where the values stopped instead of bridging the gap."""
    gaps = missing_steps(run, key)
    return sorted([*run.series(key), *((step, math.nan) for step in gaps)], key=lambda pair: pair[0])
