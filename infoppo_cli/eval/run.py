"""The evaluation runner behind ``infoppo eval``.

``run_evaluation`` loads the benchmarks, works out which samples ``OUT/samples.jsonl`` still lacks,
generates them (in this process, or on N Ray engines: ``engines``), grades them with the shared grader
(one ``GradingPool`` kept up for the whole generation), appends them to the sample store as each batch
is graded, and finally writes ``OUT/metrics.json``, the per-sample details and, for a model of an
``infoppo train`` run, the model card's results (``outputs``). Rerunning the same command continues
where an interrupted run stopped; ``OUT/eval_config.json`` holds the settings so that a resumed run
cannot silently mix samples drawn with different settings (``outdir``). Each benchmark keeps its
samples under its own name, so benchmarks can be added to a directory and resumed one by one.

With ``responses`` set, nothing is generated: the rows of a responses file are graded instead.
Progress goes to the optional ``progress`` callback; notes and warnings to the ``infoppo_cli.eval``
logger (the CLI renders both).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.data.templates import build_prompt, chat_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.eval import backends, generation
from infoppo_cli.eval.benchmarks import load_bench
from infoppo_cli.eval.engines import (
    EnginePool,
    EngineSpec,
    default_engines,
    engine_ray,
    shard,
    start_engines,
    unit_samples,
)
from infoppo_cli.eval.generation import (
    Completion,
    GenerationRequest,
    check_model_reference,
    resolve_backend,
    workload_warning,
)
from infoppo_cli.eval.outdir import bench_source, check_sources, config_document, saved_sources
from infoppo_cli.eval.outputs import write_outputs
from infoppo_cli.eval.responses import Response, grade_responses, prompt_sha, read_responses
from infoppo_cli.eval.run_state import EvalRun, Progress, no_progress
from infoppo_cli.eval.sample_store import SampleRecord, SampleStore
from infoppo_cli.eval.settings import CONFIG_FILE, EvalSettings, check_compatible, read_config
from infoppo_cli.grading import GradingPool, grade_many
from infoppo_cli.records.text import json_file_text
from infoppo_cli.rundir.weights import short, weights_fingerprint

log = logging.getLogger(__name__)


def _key(bench: str, problem_id: str) -> str:
    return f"{bench}/{problem_id}"


def load_problems(settings: EvalSettings) -> dict[str, list[Any]]:
    """The problems of every selected bench (the loader guarantees unique ids within a bench)."""
    return {
        bench: load_bench(bench, settings.bench_files.get(bench), settings.benches_file)
        for bench in settings.benches
    }


def run_evaluation(
    settings: EvalSettings, out_dir: str | Path, progress: Progress = no_progress
) -> dict[str, Any]:
    """Generate (or read) and grade what ``out_dir`` still lacks, then write and return the metrics."""
    out_dir = Path(out_dir)
    store = SampleStore(out_dir)
    if settings.source == "generate":
        if settings.model is None:
            raise UsageError("no model to evaluate: pass --model PATH_OR_HF_ID, or --responses FILE")
        check_model_reference(settings.model)
        if not len(store):  # a fresh run will generate: fail on a missing GPU before any download
            resolve_backend(settings.backend)
    run = _open_run(settings, out_dir, load_problems(settings), store, progress)
    settings = run.settings
    _check_golds(run)
    if store.dropped_torn_line:
        log.info("dropped a half-written last line of %s (from a crash)", store.path)
    try:
        if settings.responses is not None:
            _grade_responses_file(run)
        else:
            _generate_missing(run)
    except KeyboardInterrupt:
        log.warning(
            "%d samples are saved in %s; run the same command again to resume", len(store), store.path
        )
        raise
    _write_config(run)
    return write_outputs(run)


def _open_run(
    settings: EvalSettings,
    out_dir: Path,
    problems: dict[str, list[Any]],
    store: SampleStore,
    progress: Progress,
) -> EvalRun:
    """The run on ``out_dir``: refused when its samples were drawn otherwise (sampling settings, or a
    benchmark's source), else with the benchmarks evaluated there earlier carried along."""
    saved_config = read_config(out_dir)
    if len(store) and saved_config is None:
        raise UsageError(f"{store.path} exists but {out_dir / CONFIG_FILE} does not; use another --out")
    sources = {b: bench_source(b, settings.bench_files.get(b), settings.benches_file) for b in problems}
    stored = {record.bench for record in store}
    earlier: dict[str, Any] = {}
    if saved_config is not None and len(store):
        earlier = saved_sources(saved_config)
        check_compatible(saved_config["settings"], settings)
        check_sources(earlier, sources, stored)
        if settings.backend is None:
            settings = dataclasses.replace(settings, backend=saved_config["settings"].get("backend"))
    fingerprint = weights_fingerprint(settings.model) if settings.responses is None else None
    if saved_config is not None and len(store):
        check_same_weights(saved_config, fingerprint, out_dir)
    prompt_info = dict((saved_config or {}).get("prompt", {}))
    run = EvalRun(settings, out_dir, problems, store, prompt_info, progress, fingerprint=fingerprint)
    run.carried = {b: src.get("file") for b, src in earlier.items() if b in stored and b not in problems}
    run.sources = {**{b: earlier[b] for b in run.carried}, **sources}
    if run.carried:
        log.info("also reported: %s, evaluated into %s earlier", ", ".join(run.carried), out_dir)
    return run


def check_same_weights(saved_config: dict[str, Any], fingerprint: str | None, out_dir: Path) -> None:
    """Refuse to add to (or report) samples of other weights than these: a model directory retrained
    in place (``train --resume`` rewrites ``final/``) keeps its path, not its weights."""
    saved = (saved_config.get("weights") or {}).get("fingerprint")
    if fingerprint is None or saved == fingerprint:
        return
    was = f"weights {short(saved)}" if saved else "weights it did not fingerprint"
    raise UsageError(
        f"{out_dir} holds samples of {was}, and the model now has weights {short(fingerprint)}: "
        "pass another --out to evaluate these weights"
    )


def _write_config(run: EvalRun) -> None:
    document = config_document(run.settings, run.prompt_info, run.sources, run.carried)
    document["weights"] = {"fingerprint": run.fingerprint}
    atomic_write_text(run.out_dir / CONFIG_FILE, json_file_text(document))
    run.config_written = True


def _store(run: EvalRun, records: Sequence[SampleRecord]) -> None:
    """Append graded samples, the configuration first (samples are never stored without it)."""
    if not run.config_written:
        _write_config(run)
    run.store.append(records)


def _check_golds(run: EvalRun) -> None:
    for record in run.store:
        gold = run.gold(record.bench, record.id)
        if gold is not None and gold != record.gold:
            raise UsageError(
                f"{run.store.path} graded {record.bench}/{record.id} against the answer {record.gold!r}, "
                f"but the benchmark now says {gold!r}; use another --out"
            )


def _grade_responses_file(run: EvalRun) -> None:
    responses = read_responses(run.settings.responses, run.problems)
    todo = [r for r in responses if (r.bench, r.id, r.sample) not in run.store]
    if len(todo) < len(responses):
        log.info("resuming: %d of %d responses already graded", len(responses) - len(todo), len(responses))
    covered = {(r.bench, r.id) for r in responses}
    for bench, bench_problems in run.problems.items():
        missing = sum((bench, p.id) not in covered for p in bench_problems)
        if missing:
            log.warning(
                "the responses cover %d of %d %s problems; metrics use only those",
                len(bench_problems) - missing,
                len(bench_problems),
                bench,
            )
    if not todo:
        return

    def grade_fn(pairs: Sequence[tuple[str, str]], on_done: Callable[[int], None]) -> list[Any]:
        return grade_many(
            pairs, workers=run.settings.workers, timeout=run.settings.grade_timeout, on_done=on_done
        )

    advance = run.progress("grading", len(todo))
    items = [(r, run.gold(r.bench, r.id) or "", None) for r in todo]
    _store(run, grade_responses(items, grade_fn, advance))


def _stored_counts(run: EvalRun) -> dict[tuple[str, str], int]:
    """Per problem of this run, how many of its first ``samples`` samples are stored."""
    counts: dict[tuple[str, str], int] = {}
    for record in run.store:
        key = (record.bench, record.id)
        if record.sample < run.settings.samples and run.gold(*key) is not None:
            counts[key] = counts.get(key, 0) + 1
    return counts


def missing_requests(
    run: EvalRun, prompts: Mapping[str, str], counts: Mapping[tuple[str, str], int]
) -> list[GenerationRequest]:
    """One request per problem that lacks some of its first ``samples`` samples (``counts``: how many
    are stored, :func:`_stored_counts`)."""
    requests = []
    for bench, bench_problems in run.problems.items():
        for problem in bench_problems:
            if counts.get((bench, problem.id), 0) == run.settings.samples:
                continue
            todo = tuple(i for i in range(run.settings.samples) if (bench, problem.id, i) not in run.store)
            key = _key(bench, problem.id)
            requests.append(GenerationRequest(key, prompts[key], todo, run.settings.seed))
    return requests


def _generate_missing(run: EvalRun) -> None:
    settings = run.settings
    counts = _stored_counts(run)
    total = settings.samples * sum(len(ps) for ps in run.problems.values())
    missing = total - sum(counts.values())
    if not missing:
        return
    engines = settings.engines or default_engines(settings.tensor_parallel)
    warning = workload_warning(missing, settings.max_tokens, settings.backend or "vllm", engines)
    if warning:
        log.warning(warning)
    requests = missing_requests(run, _prompts(run, generation.load_tokenizer(settings.model)), counts)
    if missing < total:
        log.info("resuming: %d of %d samples already in %s", total - missing, total, run.store.path)
    backend_name = resolve_backend(settings.backend)
    if backend_name == "hf" and settings.tensor_parallel > 1:
        log.warning("--tensor-parallel only applies to --backend vllm; ignored")
    run.settings = dataclasses.replace(settings, backend=backend_name)
    by_key = {_key(b, p.id): (b, p) for b, ps in run.problems.items() for p in ps}
    prompts = {r.key: r.prompt for r in requests}
    # One pool for the whole run: its workers stay up between batches instead of restarting each time.

    with GradingPool(workers=settings.workers, timeout=settings.grade_timeout) as pool:
        generated = run.progress("generating", missing)
        graded = run.progress("grading", missing)
        for batch in _completions(run.settings, requests):
            generated(len(batch))
            items = [_as_response(c, by_key, prompts) for c in batch]
            _store(run, grade_responses(items, pool.grade, graded))


def _prompts(run: EvalRun, tokenizer: Any) -> dict[str, str]:
    """Every problem's exact prompt text (the same for every backend: the tokenizer's chat template)."""
    prompts = {
        _key(bench, p.id): build_prompt(tokenizer, p.problem, run.settings.template)
        for bench, ps in run.problems.items()
        for p in ps
    }
    run.prompt_info = {
        "chat_template": chat_prompt(tokenizer, "x") != "x",
        "first_prompt": next(iter(prompts.values())),
    }
    return prompts


def _completions(settings: EvalSettings, requests: list[GenerationRequest]) -> Iterator[list[Completion]]:
    """Generate ``requests`` in this process (one engine, no cluster) or on Ray engines."""
    engines = settings.engines or default_engines(settings.tensor_parallel)
    if engines == 1 and settings.address is None:
        yield from _generate_here(settings, requests)
    else:
        yield from _generate_on_ray(settings, requests, engines)


def _generate_here(settings: EvalSettings, requests: list[GenerationRequest]) -> Iterator[list[Completion]]:
    log.info("loading %s (%s backend)", settings.model, settings.backend)
    backend = backends.load_backend(
        settings.backend,
        settings.model,
        tensor_parallel=settings.tensor_parallel,
        seed=settings.seed,
        batch_size=settings.batch_size,
    )
    yield from backend.generate(requests, settings.sampling)


def _generate_on_ray(
    settings: EvalSettings, requests: list[GenerationRequest], engines: int
) -> Iterator[list[Completion]]:
    spec = EngineSpec(
        settings.backend, settings.model, settings.tensor_parallel, settings.seed, settings.batch_size
    )
    with engine_ray(settings.address):
        log.info("starting %d %s engines for %s", engines, settings.backend, settings.model)
        pool = EnginePool(start_engines(spec, engines))
        try:
            yield from pool.run(shard(requests, unit_samples(spec, settings.samples)), settings.sampling)
        finally:
            pool.shutdown()


def _as_response(
    completion: Completion, by_key: Mapping[str, tuple[str, Any]], prompts: Mapping[str, str]
) -> tuple[Response, str, str]:
    bench, problem = by_key[completion.key]
    response = Response(
        bench, problem.id, completion.sample, completion.text, completion.num_tokens, completion.finish_reason
    )
    return response, problem.answer, prompt_sha(prompts[completion.key])
