"""The final metrics of a sweep averaged over seeds: one row per grid point (value, arm), each metric as
its mean over the finished seeds with a 95% t interval and the number of seeds, beside the per-run table.

A seed whose value is NaN or infinite (or that broke before its last value, see
:mod:`infoppo_cli.report.health`) makes the mean non-finite and is counted, so a diverged seed is never
averaged away. Only runs whose status is ``done`` count: a run still going has no final value yet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infoppo_cli.report.curves import group_runs, mean_ci
from infoppo_cli.report.health import Healths, health_of
from infoppo_cli.report.runs import RunData
from infoppo_cli.report.tables import cell_text, drop_empty_columns, final_values, table_csv

SEED_MEAN_TITLE = "Final metrics, mean over seeds (± 95% CI, n seeds)"
FINISHED = "done"


@dataclass(frozen=True)
class SeedMean:
    """One metric of one grid point over its seeds."""

    mean: float
    half_width: float
    """The 95% t interval's half-width (0 for one seed, NaN when a seed is not finite)."""
    n: int
    nonfinite: int = 0
    """Seeds whose value is NaN or infinite."""

    def __str__(self) -> str:
        text = cell_text(self.mean)
        if self.nonfinite:
            return f"{text} (n={self.n}, {self.nonfinite} not finite)"
        if self.n > 1:
            text += f" ± {cell_text(self.half_width)}"
        return f"{text} (n={self.n})"


def seed_mean(values: Sequence[float | None]) -> SeedMean | None:
    """The mean over the seeds that have a value (``None`` when none has)."""
    present = [value for value in values if value is not None]
    if not present:
        return None
    mean, half = mean_ci(present)
    return SeedMean(mean, half, len(present), sum(not math.isfinite(value) for value in present))


def seed_mean_rows(
    runs: Sequence[RunData], benches: Sequence[str], healths: Healths | None = None
) -> tuple[list[str], list[list[Any]]]:
    """One row per grid point of the sweeps among ``runs``: sweep, value, arm, its finished runs and all
    its runs, then a :class:`SeedMean` (or ``None``) per benchmark, reward and length (each run's
    :func:`tables.final_values`; ``healths`` as :func:`tables.table_rows` takes them)."""
    metrics = [*benches, "reward", "length"]
    columns = ["sweep", "value", "arm", "done", "runs", *metrics]
    rows = []
    for members in group_runs([run for run in runs if run.sweep is not None]).values():
        finished = [run for run in members if run.status == FINISHED]
        values = [final_values(run, health_of(run, healths), benches) for run in finished]
        head = members[0]
        means = [seed_mean([value[i] for value in values]) for i in range(len(metrics))]
        rows.append([head.sweep, head.value_label or None, head.arm, len(finished), len(members), *means])
    return drop_empty_columns(columns, rows)


def seed_mean_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV of :func:`seed_mean_rows`: each metric as ``<metric>_mean``, ``<metric>_ci95`` and
    ``<metric>_n``."""
    flat_columns: list[str] = []
    flat_rows: list[list[Any]] = [[] for _ in rows]
    for i, column in enumerate(columns):
        cells = [row[i] for row in rows]
        if not any(isinstance(cell, SeedMean) for cell in cells):
            flat_columns.append(column)
            for flat, cell in zip(flat_rows, cells, strict=True):
                flat.append(cell)
            continue
        flat_columns += [f"{column}_mean", f"{column}_ci95", f"{column}_n"]
        for flat, cell in zip(flat_rows, cells, strict=True):
            flat += [cell.mean, cell.half_width, cell.n] if cell else [None, None, None]
    return table_csv(flat_columns, flat_rows)
