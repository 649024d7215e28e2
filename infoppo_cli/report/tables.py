"""The report's tables: final metrics per run (CSV, Markdown) and the sweep's hyper-parameters beside its
final metrics (``hparams.csv``, and TensorBoard HParams summaries for its parallel-coordinates view)."""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.report.runs import RunData

PAPER_BENCHES = ("aime24", "aime25")

TABLE_METRICS: tuple[tuple[str, str], ...] = (
    ("reward_mean", "reward"),
    ("response_length_mean", "length"),
    ("entropy_mean", "entropy"),
    ("rho_mean", "rho"),
    ("info_discount_mean", "Gamma_info"),
    ("clip_upper_mean", "clip_upper"),
    ("clip_lower_mean", "clip_lower"),
)
"""metrics.jsonl keys in the final-metrics table (last logged value) and their column names."""

TABLE_TITLE = "Final metrics (last logged step; accuracy in %)"


def eval_benches_of(runs: Sequence[RunData]) -> list[str]:
    """Benchmarks with any accuracy, the paper's two first.

    metrics.jsonl holds OpenRLHF's own eval keys too (``eval_<ds>_pass1`` as a fraction,
    ``eval_<ds>_truncated_rate``, ``eval_num_samples`` ...); ``eval_<X>`` counts as an accuracy in percent
    when X is a registry benchmark or OpenRLHF logged ``eval_<X>_pass1`` beside it.
    """
    from infoppo_cli.eval.benchmarks import BENCH_NAMES

    logged = {
        key[len("eval_") :] for run in runs for row in run.steps for key in row if key.startswith("eval_")
    }
    found = {bench for run in runs for bench in run.eval_benches}
    found |= {name for name in logged if name in BENCH_NAMES or f"{name}_pass1" in logged}
    return [*(b for b in PAPER_BENCHES if b in found), *sorted(found - set(PAPER_BENCHES))]


def table_rows(runs: Sequence[RunData], benches: Sequence[str]) -> tuple[list[str], list[list[Any]]]:
    """Column names and one row per run: identity, last step, last logged metrics, final accuracies."""
    columns = ["run", "sweep", "value", "arm", "seed", "status", "steps"]
    columns += [name for _, name in TABLE_METRICS] + list(benches) + ["accuracy_from"]
    rows = []
    for run in runs:
        accuracies = [run.final_accuracy(bench) for bench in benches]
        sources = sorted({source for _, source in accuracies if source})
        rows.append(
            [
                run.name,
                run.sweep,
                run.value_label,
                run.arm,
                run.seed,
                run.status,
                int(run.steps[-1]["step"]) if run.steps else None,
                *(run.last(key) for key, _ in TABLE_METRICS),
                *(score for score, _ in accuracies),
                "+".join(sources) or None,
            ]
        )
    return columns, rows


def cell_text(value: Any) -> str:
    """A table cell for people: 4 significant digits, '-' for missing."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV with full-precision numbers and empty cells for missing values."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            ["" if value is None else repr(value) if isinstance(value, float) else value for value in row]
        )
    return buffer.getvalue()


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    return lines + ["| " + " | ".join(cell_text(value) for value in row) + " |" for row in rows]


def table_markdown(columns: Sequence[str], rows: Sequence[Sequence[Any]], notes: Sequence[str]) -> str:
    """A Markdown table followed by the report's warnings."""
    lines = markdown_table(columns, rows)
    if notes:
        lines += ["", "Notes (missing or partial metrics):", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def hparams_rows(runs: Sequence[RunData], benches: Sequence[str]) -> tuple[list[str], list[list[Any]]]:
    """One row per run: its identity, every swept or held hyper-parameter, then its final metrics."""
    parameters = list(dict.fromkeys(name for run in runs for name in run.parameters))
    columns = ["run", "sweep", "arm", "method", "seed", *parameters, *benches, "reward", "length"]
    rows = [
        [
            run.name,
            run.sweep,
            run.arm,
            run.method,
            run.seed,
            *(run.parameters.get(name) for name in parameters),
            *(run.final_accuracy(bench)[0] for bench in benches),
            run.last("reward_mean"),
            run.last("response_length_mean"),
        ]
        for run in runs
    ]
    return columns, rows


def write_tensorboard_hparams(directory: Path, runs: Sequence[RunData], benches: Sequence[str]) -> int:
    """TensorBoard HParams summaries, one sub-directory per run with final metrics (``tensorboard
    --logdir DIR`` opens them in the HParams tab's parallel-coordinates view); returns how many."""
    from torch.utils.tensorboard import SummaryWriter

    columns, rows = hparams_rows(runs, benches)
    metric_names = {*benches, "reward", "length"}
    written = 0
    for row in rows:
        record = dict(zip(columns, row, strict=True))
        metrics = {f"final/{name}": record[name] for name in metric_names if record[name] is not None}
        if not metrics:
            continue
        hparams = {
            name: value
            for name, value in record.items()
            if name not in metric_names and name != "run" and value is not None
        }
        # written beside and renamed over the last report's, so a re-run shows each run once in TensorBoard
        target, fresh = directory / record["run"], directory / f".{record['run']}.new"
        shutil.rmtree(fresh, ignore_errors=True)
        with SummaryWriter(log_dir=str(fresh)) as writer:
            writer.add_hparams(hparams, metrics, run_name=".")
        shutil.rmtree(target, ignore_errors=True)
        fresh.rename(target)
        written += 1
    return written
