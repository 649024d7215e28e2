"""The report's tables: final metrics per run (CSV, Markdown) and the sweep's hyper-parameters beside its
final metrics (``hparams.csv``, and TensorBoard HParams summaries for its parallel-coordinates view)."""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.eval.benchmarks import bench_names, describe_bench
from infoppo_cli.openrlhf_adapter.metrics_log import BENCHMARK_MEAN as TRAINER_BENCHMARK_MEAN
from infoppo_cli.openrlhf_adapter.metrics_log import LEGACY_REWARD_MEAN_SUFFIX, REWARD_MEAN_SUFFIX
from infoppo_cli.report.health import (
    Health,
    Healths,
    NotLastEval,
    Stale,
    final_accuracy,
    health_of,
    settled,
)
from infoppo_cli.report.runs import RunData

PAPER_BENCHES = ("aime24", "aime25")

TABLE_METRICS: tuple[tuple[str, str], ...] = (
    ("reward_mean", "reward"),
    ("response_length_mean", "length"),
    ("entropy_mean", "entropy"),
    ("rho_mean", "rho"),
    ("info_discount_mean", "Gamma_info"),
    ("token_discount_mean", "Gamma_token"),
    ("clip_upper_mean", "clip_upper"),
    ("clip_lower_mean", "clip_lower"),
)
"""metrics.jsonl keys in the final-metrics table (last logged value) and their column names."""

TABLE_TITLE = "Final metrics (last logged step; accuracy in %)"
_DIRECTORY_UNSAFE = re.compile(r"[^\w.=@+-]+")
"""What a run's name may not carry into a directory name (``Qwen/Qwen3-4B`` would nest)."""


BENCHMARK_MEANS = (TRAINER_BENCHMARK_MEAN.removeprefix("eval_"), "mean_over_benches")
"""The trainer's mean over the in-training benchmarks, logged beside them (and its name in runs made
before it was an accuracy): not a benchmark itself."""


def eval_benches_of(runs: Sequence[RunData], benches_file: str | Path | None = None) -> list[str]:
    """Benchmarks with any accuracy, AIME24 and AIME25 (InfoPPO's main figures) first.

    metrics.jsonl holds other eval keys too (``eval_<ds>_reward_mean``, the mean reward, which runs
    before it called ``eval_<ds>_pass1``; ``eval_<ds>_truncated_rate``, ``eval_num_samples`` ...) and the
    trainer's mean over benchmarks; ``eval_<X>`` counts as an accuracy in percent when X is a benchmark
    of the registry (with ``benches_file``'s) or the trainer logged X's mean reward beside it.
    """
    known = set(bench_names(benches_file))
    logged = {
        key[len("eval_") :] for run in runs for row in run.steps for key in row if key.startswith("eval_")
    }
    found = {bench for run in runs for bench in run.eval_benches}
    rewards = (REWARD_MEAN_SUFFIX, LEGACY_REWARD_MEAN_SUFFIX)
    found |= {name for name in logged if name in known or any(f"{name}{end}" in logged for end in rewards)}
    found -= set(BENCHMARK_MEANS)
    return [*(b for b in PAPER_BENCHES if b in found), *sorted(found - set(PAPER_BENCHES))]


def bench_titles(benches: Sequence[str], benches_file: str | Path | None = None) -> str:
    """A caption's sentence naming each benchmark by its registry title (``describe_bench``), e.g.
    ``" Benchmarks: aime24 = AIME 2024 (I + II)."``; empty when none has a title beyond its name."""
    titled = [(bench, describe_bench(bench, benches_file)["title"]) for bench in benches]
    named = [f"{bench} = {title}" for bench, title in titled if title and title != bench]
    return f" Benchmarks: {'; '.join(named)}." if named else ""


def table_rows(
    runs: Sequence[RunData], benches: Sequence[str], healths: Healths | None = None
) -> tuple[list[str], list[list[Any]]]:
    """Column names and one row per run: identity, last step, where it broke, last logged metrics, final
    accuracies (with the eval's standard error where there is one). A non-finite value is shown as it is;
    a value from before the run broke is :class:`Stale`. Columns empty for every run are left out.
    ``healths``: the runs' :func:`health.assess_all`, else each run is assessed here."""
    columns = ["run", "model", "method", "sweep", "value", "arm", "seed", "status", "steps", "diverged_at"]
    columns += [name for _, name in TABLE_METRICS]
    columns += [name for bench in benches for name in (bench, f"{bench}_se")]
    columns += ["accuracy_from", "weights"]
    rows = []
    for run in runs:
        health = health_of(run, healths)
        accuracies = {bench: final_accuracy(run, health, bench) for bench in benches}
        sources = sorted({source for _, source in accuracies.values() if source})
        cells: dict[str, Any] = {
            "run": run.name,
            "model": run.model if run.model != run.name else None,  # an eval of a Hub model is named by it
            "method": run.method,
            "sweep": run.sweep,
            "value": run.value_label or None,
            "arm": run.arm if run.sweep else None,
            "seed": run.seed,
            "status": run.status,
            "steps": int(run.steps[-1]["step"]) if run.steps else None,
            "diverged_at": None if health.break_step is None else int(health.break_step),
            "accuracy_from": "+".join(sources) or None,
            "weights": run.weights if "eval" in sources else None,  # the scored weights' fingerprint
        }
        cells |= {name: health.mark(run.last_logged(key)) for key, name in TABLE_METRICS}
        for bench, (score, source) in accuracies.items():
            cells[bench] = score
            cells[f"{bench}_se"] = run.eval_score(bench, "mean@k_se") if source == "eval" else None
        rows.append([cells.get(column) for column in columns])
    return drop_empty_columns(columns, rows)


def drop_empty_columns(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], keep: Sequence[str] = ("run",)
) -> tuple[list[str], list[list[Any]]]:
    """Leave out the columns no row has a value in (training metrics of eval directories, say)."""
    kept = [
        i for i, column in enumerate(columns) if column in keep or any(row[i] is not None for row in rows)
    ]
    return [columns[i] for i in kept], [[row[i] for i in kept] for row in rows]


def cell_text(value: Any) -> str:
    """A table cell for people: 4 significant digits (more near 1, :func:`_significant`), '-' for
    missing, ``NaN``/``inf`` as they are, a value from before its run broke with its step."""
    if value is None:
        return "-"
    if isinstance(value, Stale):
        return f"{cell_text(value.value)} (step {value.step:g})"
    if isinstance(value, NotLastEval):
        status = f"; run {value.status}" if value.status else ""
        return f"{cell_text(value.value)} (step {value.step:g}{status})"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return _significant(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    return str(value)


def _significant(value: float) -> str:
    """4 significant digits, more where that would round a value to 1 that is not 1 (a discount such as
    Γ_info = 0.99996 must not read as 1)."""
    text = f"{value:.4g}"
    digits = 4
    while text in ("1", "-1") and abs(value) != 1.0 and digits < 17:
        digits += 1
        text = f"{value:.{digits}g}"
    return text


def csv_cell(value: Any) -> Any:
    """A CSV cell: full precision, ``nan``/``inf``/``-inf`` for non-finite values (as NumPy and pandas read
    them), a :class:`Stale` value's number, empty for missing."""
    if isinstance(value, Stale | NotLastEval):
        value = value.value
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else value


def table_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV with full-precision numbers and empty cells for missing values."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(value) for value in row])
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


def final_values(run: RunData, health: Health, benches: Sequence[str]) -> list[float | None]:
    """``run``'s final accuracy on each of ``benches``, then its final reward and length: NaN for a value
    from before the run broke (:func:`health.settled`)."""
    return [
        *(settled(final_accuracy(run, health, bench)[0]) for bench in benches),
        *(settled(health.mark(run.last_logged(key))) for key in ("reward_mean", "response_length_mean")),
    ]


def hparams_rows(
    runs: Sequence[RunData], benches: Sequence[str], healths: Healths | None = None
) -> tuple[list[str], list[list[Any]]]:
    """One row per run: its identity, every swept or held hyper-parameter, then its final metrics (NaN
    for a run that broke before its last value)."""
    parameters = list(dict.fromkeys(name for run in runs for name in run.parameters))
    columns = ["run", "sweep", "arm", "method", "model", "seed", *parameters, *benches, "reward", "length"]
    rows = []
    for run in runs:
        rows.append(
            [
                *(run.name, run.sweep, run.arm, run.method, run.model, run.seed),
                *(run.parameters.get(name) for name in parameters),
                *final_values(run, health_of(run, healths), benches),
            ]
        )
    return columns, rows


def write_tensorboard_hparams(
    directory: Path, runs: Sequence[RunData], benches: Sequence[str], healths: Healths | None = None
) -> int:
    """TensorBoard HParams summaries, one sub-directory per run with final metrics (``tensorboard
    --logdir DIR`` opens them in the HParams tab's parallel-coordinates view); returns how many."""
    from torch.utils.tensorboard import SummaryWriter  # lazy: only for --tensorboard

    columns, rows = hparams_rows(runs, benches, healths)
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
        name = _DIRECTORY_UNSAFE.sub("_", record["run"]).strip("._") or "run"
        target, fresh = directory / name, directory / f".{name}.new"
        shutil.rmtree(fresh, ignore_errors=True)
        with SummaryWriter(log_dir=str(fresh)) as writer:
            writer.add_hparams(hparams, metrics, run_name=".")
        shutil.rmtree(target, ignore_errors=True)
        fresh.rename(target)
        written += 1
    return written
