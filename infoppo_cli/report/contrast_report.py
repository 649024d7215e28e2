"""The pre-registered contrasts written out: ``contrasts.md`` (the differences, then the arms),
``contrasts.csv`` (one row per contrast and metric, full precision) and ``contrasts.png`` (a forest plot:
each contrast and metric's mean difference a − b with its 95% t interval over seeds, a line at zero)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

from infoppo_cli.report.contrasts import ARM_EXTRAS, METRICS, ArmSummary, ContrastResult, Difference
from infoppo_cli.report.figures import PANEL_INCHES, PAPER_RC, new_figure, save_figure
from infoppo_cli.report.tables import cell_text, markdown_table, table_csv

CONTRASTS_STEM = "contrasts"
CONTRASTS_TITLE = "Pre-registered contrasts (paired by seed: a − b, accuracy points or the record named)"
INTERVAL_LABEL = "a − b (accuracy points, or the record named), 95% t interval over seeds"
DIFFERENCE_COLUMNS = [
    "contrast",
    "bench",
    "metric",
    "n",
    "mean difference",
    "95% interval",
    "per-seed differences",
]
ARM_COLUMNS = ["contrast", "arm", "n", *METRICS, *(name for name, _ in ARM_EXTRAS)]
ROW_INCHES = 0.22
"""Height of one row of the forest plot."""
WIDEN_TRIES = 5


def signed(value: float | None) -> str:
    text = cell_text(value)
    return f"+{text}" if value is not None and math.isfinite(value) and value > 0 else text


def _interval_text(difference: Difference) -> str:
    interval = difference.interval
    if interval is None:
        return "none (n < 2)"
    return f"[{signed(interval[0])}, {signed(interval[1])}]"


def difference_rows(results: Sequence[ContrastResult]) -> tuple[list[str], list[list[Any]]]:
    """The differences table: one row per contrast and metric, cells as text."""
    rows = []
    for result in results:
        for difference in result.differences:
            per_seed = ", ".join(
                f"{seed}: {signed(value)}"
                for seed, value in zip(difference.seeds, difference.differences, strict=True)
            )
            rows.append(
                [
                    result.contrast.name,
                    result.contrast.curve or result.bench,
                    difference.metric,
                    difference.n,
                    signed(difference.mean),
                    _interval_text(difference),
                    per_seed or "-",
                ]
            )
    return DIFFERENCE_COLUMNS, rows


def _mean_se_text(pair: tuple[float | None, float | None]) -> str:
    mean, se = pair
    return cell_text(mean) if se is None else f"{cell_text(mean)} ± {cell_text(se)}"


def _arm_row(name: str, side: str, summary: ArmSummary) -> list[Any]:
    return [
        name,
        f"{side}: {summary.arm}",
        len(summary.runs),
        *(_mean_se_text(summary.metrics[metric]) for metric in METRICS),
        *(cell_text(summary.extras[extra]) for extra, _ in ARM_EXTRAS),
    ]


def contrasts_markdown(results: Sequence[ContrastResult]) -> list[str]:
    """The differences table, what its metrics and interval are, the arms' table and the notes."""
    columns, rows = difference_rows(results)
    arm_rows = [
        _arm_row(result.contrast.name, side, summary)
        for result in results
        for side, summary in (("a", result.a), ("b", result.b))
    ]
    lines = [*markdown_table(columns, rows), ""]
    lines += [
        "Per seed, a − b in accuracy points of the in-training evaluation; mean difference with its 95% t "
        "interval over seeds (n − 1 degrees of freedom; none below 2 seeds). Metrics: "
        + "; ".join(f"`{name}` = {what}" for name, what in METRICS.items())
        + ".",
        "",
    ]
    if any(result.contrast.x == "responses" for result in results):
        lines += [
            "A contrast per response generated reads each seed's two curves against the responses generated, "
            "up to the common budget B (the smaller of the two runs' totals), interpolated between evals: "
            "`last` at B, `last3` the mean at 2/3, 5/6 and all of B, `auc` the mean accuracy over [0, B].",
            "",
        ]
    lines += [
        "Arms over the paired seeds: each metric's mean ± standard error over seeds (%), and the mean over "
        "seeds of the last step's response length (tokens), Γ_info = γ^Σρ and γ^T.",
        "",
        *markdown_table(ARM_COLUMNS, arm_rows),
    ]
    notes = [note for result in results for note in result.notes]
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    return lines


def contrasts_csv(results: Sequence[ContrastResult]) -> str:
    """One row per contrast and metric: the difference, its interval, the seeds and per-seed
    differences (``;``-separated) and both arms' metric mean, standard error and extras."""
    columns = ["contrast", "bench", "metric", "n", "mean_difference", "ci95_low", "ci95_high", "seeds"]
    columns += ["differences", "a", "b", "a_mean", "a_se", "b_mean", "b_se"]
    columns += [f"{side}_{key}" for side in ("a", "b") for _, key in ARM_EXTRAS]
    rows = []
    for result in results:
        for difference in result.differences:
            low, high = difference.interval or (None, None)
            rows.append(
                [
                    *(result.contrast.name, result.contrast.curve or result.bench, difference.metric),
                    *(difference.n, difference.mean),
                    *(low, high, ";".join(map(str, difference.seeds))),
                    ";".join(repr(value) for value in difference.differences),
                    *(str(result.a.arm), str(result.b.arm)),
                    *result.a.metrics[difference.metric],
                    *result.b.metrics[difference.metric],
                    *(summary.extras[name] for summary in (result.a, result.b) for name, _ in ARM_EXTRAS),
                ]
            )
    return table_csv(columns, rows)


def forest_figure(results: Sequence[ContrastResult]) -> Any:
    """One row per contrast and metric (top to bottom in the file's order): the mean difference as a
    point with its 95% t interval, hollow where there is no interval; a vertical line at zero."""
    entries = [
        (f"{result.contrast.name}: {difference.metric}", difference)
        for result in results
        for difference in result.differences
        if difference.mean is not None and math.isfinite(difference.mean)
    ]
    with matplotlib.rc_context(PAPER_RC):
        figure = new_figure(2, CONTRASTS_TITLE)
        figure.set_figheight(max(PANEL_INCHES[1], 0.9 + ROW_INCHES * len(entries)))
        ax = figure.subplots()
        for y, (_, difference) in enumerate(reversed(entries)):
            interval = difference.interval
            if interval is None:
                ax.plot([difference.mean], [y], "o", markerfacecolor="white", color="tab:blue")
                continue
            low, high = interval
            error = [[difference.mean - low], [high - difference.mean]]
            ax.errorbar([difference.mean], [y], xerr=error, fmt="o", color="tab:blue", capsize=2)
        ax.axvline(0.0, color="0.3", linewidth=0.8)
        ax.set_yticks(range(len(entries)), [label for label, _ in reversed(entries)])
        ax.set_ylim(-0.7, max(len(entries), 1) - 0.3)
        ax.set_xlabel(INTERVAL_LABEL)
        ax.grid(axis="x", alpha=0.3)
        if not entries:
            ax.text(0.5, 0.5, "no paired seeds", ha="center", va="center", transform=ax.transAxes)
        _widen_to_fit(figure)
    return figure


def _widen_to_fit(figure: Any) -> None:
    """Widen ``figure`` until everything drawn lies within it: long contrast names take the width from
    the axes, and the axis label centred under a narrowed axes would then run off the right edge."""
    for _ in range(WIDEN_TRIES):
        figure.canvas.draw()
        drawn, box = figure.get_tightbbox(), figure.bbox_inches
        overflow = max(box.x0 - drawn.x0, 0.0) + max(drawn.x1 - box.x1, 0.0)
        if overflow <= 0.01:
            return
        figure.set_figwidth(figure.get_figwidth() + 2 * overflow + 0.1)


def draw_contrasts(out_dir: Path, results: Sequence[ContrastResult], formats: Sequence[str]) -> list[Path]:
    """Draw :func:`forest_figure` as ``contrasts.<format>`` in ``out_dir``."""
    return save_figure(forest_figure(results), out_dir / CONTRASTS_STEM, formats)


CONTRASTS_CAPTION = (
    "Pre-registered paired contrasts (`--contrasts`): per contrast and metric, the mean over seeds of the "
    "per-seed difference a − b in accuracy points, with its 95% t interval over seeds (n − 1 degrees of "
    "freedom); a hollow point has fewer than 2 seeds and no interval. Metrics: "
    + "; ".join(f"{name} = {what}" for name, what in METRICS.items())
    + "."
)
