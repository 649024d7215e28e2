"""What a finished evaluation writes: ``metrics.json`` (the statistics of ``statistics``), the
per-sample details in lighteval's layout, and, for a model of an ``infoppo train`` run, the results
table of its model card."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.details import write_details
from infoppo_cli.eval.registry import spec_for
from infoppo_cli.eval.run_state import EvalRun
from infoppo_cli.eval.sample_store import SampleRecord
from infoppo_cli.eval.statistics import GradedSample, average_metrics, bench_metrics, per_problem_accuracy
from infoppo_cli.records import utc_timestamp
from infoppo_cli.resources import stack_versions
from infoppo_cli.rundir import (
    UnreadableEvalMetrics,
    read_eval_metrics,
    run_of_model,
    write_eval_metrics,
    write_model_card,
)

log = logging.getLogger(__name__)


def write_outputs(run: EvalRun) -> dict[str, Any]:
    """Write ``metrics.json`` and the details (atomically), refresh the model card; return the metrics."""
    metrics = compute_metrics(run)
    write_eval_metrics(run.out_dir, metrics)
    write_details(run.out_dir, selected_records(run), run.problems, metrics)
    owner = run_of_model(run.settings.model) if run.settings.model else None
    evaluates_final = owner is not None and Path(run.settings.model).resolve() == owner.final.resolve()
    if evaluates_final and Path(run.out_dir).resolve() == owner.eval.resolve():
        try:
            write_model_card(owner, metrics)
        except UsageError as exc:  # the scores are written; only the run's model card stays as it was
            log.warning(f"{owner.model_card} was not updated: {exc}")
    return metrics


def selected_records(run: EvalRun) -> dict[str, dict[str, list[SampleRecord]]]:
    """The stored samples this run reports on: per bench, per problem, ordered by sample index.

    A generation run reports samples ``0 .. samples-1``; a responses run reports every row."""
    grouped: dict[str, dict[str, list[SampleRecord]]] = {
        bench: {p.id: [] for p in ps} for bench, ps in run.problems.items()
    }
    limit = run.settings.samples if run.settings.source == "generate" else None
    for record in run.store:
        problems = grouped.get(record.bench)
        if problems is None or record.id not in problems:
            continue
        if limit is not None and record.sample >= limit:
            continue
        problems[record.id].append(record)
    for problems in grouped.values():
        for samples in problems.values():
            samples.sort(key=lambda r: r.sample)
    return grouped


def _graded(record: SampleRecord) -> GradedSample:
    return GradedSample(
        record.correct, record.extracted, record.reason, record.num_tokens, record.finish_reason
    )


def compute_metrics(run: EvalRun) -> dict[str, Any]:
    """The ``metrics.json`` document: ``benches`` (per-bench statistics, see ``eval_metrics``),
    ``average``, ``settings``, ``versions``, ``model``, ``created`` and ``per_problem`` accuracy.

    Benchmarks evaluated into the same directory by earlier runs (``run.carried``) keep the entries the
    previous ``metrics.json`` gave them, so the file covers every benchmark evaluated there."""
    grouped = selected_records(run)
    benches, per_problem, data = _carried_metrics(run)
    for bench, problems in grouped.items():
        graded = {pid: [_graded(r) for r in records] for pid, records in problems.items()}
        if not any(graded.values()):
            log.warning("no graded samples for %s; it is left out of the metrics", bench)
            continue
        benches[bench] = bench_metrics(graded)
        per_problem[bench] = per_problem_accuracy(graded)
    if not benches:
        raise UsageError("no graded samples to report on")
    return {
        "benches": benches,
        "average": average_metrics(benches),
        "settings": _settings_record(run, data),
        "versions": stack_versions(),
        "model": run.settings.model,
        "weights_fingerprint": run.fingerprint,
        "created": utc_timestamp(),
        "per_problem": per_problem,
    }


def _carried_metrics(run: EvalRun) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The previous ``metrics.json`` entries (statistics, per-problem accuracy, data) of the carried
    benchmarks; those it lacks (an earlier run stopped before its metrics) are named in a note."""
    if not run.carried:
        return {}, {}, {}
    try:
        previous = read_eval_metrics(run.out_dir) or {"benches": {}}
        old_benches, old_per_problem = previous["benches"], previous.get("per_problem", {})
        old_data = previous.get("settings", {}).get("data", {})
    except (UnreadableEvalMetrics, AttributeError):
        old_benches, old_per_problem, old_data = {}, {}, {}
    benches, per_problem, data = {}, {}, {}
    for bench in run.carried:
        if bench not in old_benches:
            log.info(
                "%s has samples in %s but no metrics yet: evaluate it again to add them", bench, run.out_dir
            )
            continue
        benches[bench] = old_benches[bench]
        per_problem[bench] = old_per_problem.get(bench, {})
        data[bench] = old_data.get(bench, {})
    return benches, per_problem, data


def _settings_record(run: EvalRun, carried_data: dict[str, Any]) -> dict[str, Any]:
    settings = run.settings
    record: dict[str, Any] = {
        "source": settings.source,
        "model": settings.model,
        "responses": settings.responses,
        "benches": [*carried_data, *settings.benches],
    }
    if settings.source == "generate":
        record.update(
            samples=settings.samples,
            temperature=settings.temperature,
            top_p=settings.top_p,
            max_tokens=settings.max_tokens,
            template=settings.template,
            backend=settings.backend,
            tensor_parallel=settings.tensor_parallel,
            seed=settings.seed,
            **run.prompt_info,
        )
    record["grader"] = {"workers": settings.workers, "timeout_s": settings.grade_timeout}
    record["data"] = dict(carried_data)
    for bench in settings.benches:
        file = settings.bench_files.get(bench)
        spec = spec_for(bench, file, settings.benches_file)
        record["data"][bench] = {
            "data_file": file,
            "title": spec.title,
            **{
                name: getattr(spec, name) or None
                for name in ("hf_id", "config", "split", "revision", "license")
            },
        }
    record["metric_notes"] = {
        "mean@k_se": "standard error from sampling noise only, conditional on the benchmark's problems",
        "mean@k_se_problems": "standard error that also covers the choice of problems: std(p_i)/sqrt(m)",
        "maj@k": "correct samples vote together; no-answer samples do not vote; ties score 1/t",
        "average": "unweighted mean over benches; problems and samples are totals",
    }
    return record
