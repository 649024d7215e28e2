"""The evaluation runner behind ``infoppo eval``.

``run_evaluation`` loads the benchmarks, works out which samples ``OUT/samples.jsonl`` still lacks,
generates them (``generation``), grades them with the shared grader (``grading``: one
``GradingPool`` kept up for the whole generation, ``grade_many`` for a responses file), appends
them to the sample store as each batch is graded, and finally writes ``OUT/metrics.json``
atomically (``eval_metrics``). Rerunning the same command continues where an interrupted run
stopped; ``OUT/eval_config.json`` holds the settings so that a resumed run cannot silently mix
samples drawn with different settings.

With ``responses`` set, nothing is generated: the rows of a responses file (``id``, ``sample``,
``response``, optional ``bench``, ``num_tokens``, ``finish_reason``) are graded instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.cli.console import console, err_console, progress_bar
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.generation import (
    BACKENDS,
    HF_BATCH_SIZE,
    Completion,
    GenerationRequest,
    SamplingSettings,
    request_seed,
)
from infoppo_cli.eval.sample_store import SampleRecord, SampleStore
from infoppo_cli.eval.statistics import GradedSample, average_metrics, bench_metrics, per_problem_accuracy

DEFAULT_SAMPLES = 16
DEFAULT_MAX_TOKENS = 10240
"""The 4B/8B presets' response length; a model from an ``infoppo train`` run directory is evaluated
with the length it was trained with instead (the paper: max tokens = training length)."""
DEFAULT_GRADE_TIMEOUT = 10.0

CONFIG_FILE = "eval_config.json"
METRICS_FILE = "metrics.json"

# Settings that decide which responses get sampled: a resumed run must agree on all of them.
IDENTITY_FIELDS: tuple[str, ...] = (
    "model",
    "responses",
    "template",
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "backend",
    "data_file",
)


@dataclass(frozen=True)
class EvalSettings:
    """Everything one evaluation run is asked to do (CLI options after defaults are applied)."""

    benches: tuple[str, ...]
    model: str | None = None
    responses: str | None = None
    samples: int = DEFAULT_SAMPLES
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    template: str = "dapo"
    backend: str | None = None
    tensor_parallel: int = 1
    seed: int = 0
    data_file: str | None = None
    workers: int | None = None
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT
    batch_size: int = HF_BATCH_SIZE

    def __post_init__(self) -> None:
        from infoppo_cli.data.templates import TEMPLATES

        if self.samples < 1:
            raise UsageError(f"--samples must be >= 1, got {self.samples}")
        if self.tensor_parallel < 1:
            raise UsageError(f"--tensor-parallel must be >= 1, got {self.tensor_parallel}")
        if self.workers is not None and self.workers < 1:
            raise UsageError(f"--workers must be >= 1, got {self.workers}")
        if self.batch_size < 1:
            raise UsageError(f"--batch-size must be >= 1, got {self.batch_size}")
        if not self.grade_timeout > 0:
            raise UsageError(f"the grading timeout must be > 0 seconds, got {self.grade_timeout}")
        if self.backend is not None and self.backend not in BACKENDS:
            raise UsageError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}")
        if self.template not in TEMPLATES:
            raise UsageError(f"unknown template {self.template!r}; choose one of: {', '.join(TEMPLATES)}")
        if self.model is None and self.responses is None:
            raise UsageError("--model is required (or --responses FILE to grade existing responses)")
        if self.data_file is not None and len(self.benches) != 1:
            raise UsageError("--data-file replaces one benchmark's data: pass exactly one --bench with it")
        _ = self.sampling  # validates temperature, top_p and max_tokens

    @property
    def sampling(self) -> SamplingSettings:
        return SamplingSettings(self.temperature, self.top_p, self.max_tokens, self.seed)

    @property
    def source(self) -> str:
        return "responses" if self.responses is not None else "generate"


# --------------------------------------------------------------------------- settings and resume


def parse_benches(selection: str) -> tuple[str, ...]:
    """``"aime24,aime25"`` or ``"all"`` to a tuple of registry names (unknown names: UsageError)."""
    from infoppo_cli.eval.benchmarks import resolve_bench_names

    return tuple(resolve_bench_names(selection))


def default_out_dir(model: str | None, responses: str | None) -> Path:
    """``evals/<model, slugged>`` (or ``evals/responses-<file stem>``): stable, so that rerunning
    the same command resumes it."""
    if responses is not None:
        return Path("evals") / f"responses-{Path(responses).stem}"
    slug = re.sub(r"[^\w.-]+", "--", (model or "model").strip("./~ ")).strip("-.")
    return Path("evals") / (slug or "model")


def saved_settings(out_dir: Path) -> dict[str, Any] | None:
    """The settings recorded in ``OUT/eval_config.json``, or ``None`` when there are none."""
    path = Path(out_dir) / CONFIG_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))["settings"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path} is unreadable ({exc}); remove it or use another --out") from exc


def resolve_settings(options: Mapping[str, Any], out_dir: Path, resume: bool) -> EvalSettings:
    """Settings from the options given (``None`` = not given), then, with ``resume``, those saved in
    ``out_dir``, then the defaults. ``options["benches"]`` is the raw ``--bench`` text."""
    chosen = {name: value for name, value in options.items() if value is not None}
    if resume:
        saved = saved_settings(out_dir)
        if saved is None:
            raise UsageError(
                f"--resume: {Path(out_dir) / CONFIG_FILE} does not exist, so there is nothing to resume"
            )
        chosen = {**{k: v for k, v in saved.items() if v is not None}, **chosen}
    for name in ("model", "data_file", "responses"):  # local paths: absolute, so --resume works anywhere
        if isinstance(chosen.get(name), str) and Path(chosen[name]).expanduser().exists():
            chosen[name] = str(Path(chosen[name]).expanduser().resolve())
    if "max_tokens" not in chosen and chosen.get("model"):
        from infoppo_cli.train.run import trained_response_length

        trained = trained_response_length(chosen["model"])
        if trained is not None:
            chosen["max_tokens"] = trained
    benches = chosen.pop("benches", "all")
    chosen["benches"] = parse_benches(benches if isinstance(benches, str) else ",".join(benches))
    known = {f.name for f in dataclasses.fields(EvalSettings)}
    return EvalSettings(**{name: value for name, value in chosen.items() if name in known})


def _identity(settings: Mapping[str, Any]) -> dict[str, Any]:
    identity = {name: settings.get(name) for name in IDENTITY_FIELDS}
    for name in ("model", "responses", "data_file"):
        value = identity[name]
        if value is not None and Path(value).expanduser().exists():
            identity[name] = str(Path(value).expanduser().resolve())
    return identity


def check_compatible(saved: Mapping[str, Any], settings: EvalSettings) -> None:
    """Refuse to add samples to an output directory whose samples were drawn differently."""
    old, new = _identity(saved), _identity(dataclasses.asdict(settings))
    if new["backend"] is None:  # "whatever the saved run used"
        new["backend"] = old["backend"]
    differences = [
        f"{name} {old[name]!r} -> {new[name]!r}" for name in IDENTITY_FIELDS if old[name] != new[name]
    ]
    if differences:
        raise UsageError(
            "the output directory holds samples made with other settings ("
            + "; ".join(differences)
            + "): pass another --out, or drop those options and add --resume to continue as saved"
        )


# --------------------------------------------------------------------------- problems and responses


def load_problems(settings: EvalSettings) -> dict[str, list[Any]]:
    """The problems of every selected bench (the loader guarantees unique ids within a bench)."""
    from infoppo_cli.eval.benchmarks import load_bench

    return {bench: load_bench(bench, settings.data_file) for bench in settings.benches}


@dataclass(frozen=True)
class Response:
    """One row of a responses file, matched to its problem."""

    bench: str
    id: str
    sample: int
    response: str
    num_tokens: int | None
    finish_reason: str | None


def _optional_int(row: Mapping[str, Any], name: str) -> int | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return value


def read_responses(path: str | Path, problems: Mapping[str, Sequence[Any]]) -> list[Response]:
    """Parse a responses JSONL file and match each row to a problem of the selected benches.

    Rows: ``id`` and ``response`` (required), ``sample`` (default: the row's position among the
    rows of its id), ``bench`` (required only when the id exists in several selected benches),
    ``num_tokens`` and ``finish_reason`` (``"stop"``/``"length"``). Any problem (unreadable file,
    malformed row, unknown id or bench, a repeated sample) is a UsageError naming the line.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the responses file {path}: {exc}") from exc
    benches_of: dict[str, list[str]] = defaultdict(list)
    for bench, bench_problems in problems.items():
        for problem in bench_problems:
            benches_of[problem.id].append(bench)
    responses: list[Response] = []
    seen: set[tuple[str, str, int]] = set()
    next_sample: dict[tuple[str, str], int] = defaultdict(int)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
            if "id" not in row or not isinstance(row.get("response"), str):
                raise ValueError('needs "id" and a string "response"')
            problem_id = str(row["id"])
            sample = _optional_int(row, "sample")
            num_tokens = _optional_int(row, "num_tokens")
            finish_reason = row.get("finish_reason")
            if finish_reason not in (None, "stop", "length"):
                raise ValueError(f'finish_reason must be "stop" or "length", got {finish_reason!r}')
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from exc
        bench = _bench_of_row(row, problem_id, benches_of, problems, where)
        if sample is None:
            sample = next_sample[(bench, problem_id)]
        next_sample[(bench, problem_id)] = max(next_sample[(bench, problem_id)], sample + 1)
        if (bench, problem_id, sample) in seen:
            raise UsageError(f"{where}: sample {sample} of {bench}/{problem_id} appears twice")
        seen.add((bench, problem_id, sample))
        responses.append(Response(bench, problem_id, sample, row["response"], num_tokens, finish_reason))
    if not responses:
        raise UsageError(f"the responses file {path} holds no responses")
    return responses


def _bench_of_row(
    row: Mapping[str, Any],
    problem_id: str,
    benches_of: Mapping[str, list[str]],
    problems: Mapping[str, Any],
    where: str,
) -> str:
    candidates = benches_of.get(problem_id, [])
    if "bench" in row:
        bench = str(row["bench"])
        if bench not in problems:
            raise UsageError(
                f"{where}: bench {bench!r} is not being evaluated (selected: {', '.join(problems)})"
            )
        if bench not in candidates:
            raise UsageError(f"{where}: unknown id {problem_id!r} for {bench}")
        return bench
    if not candidates:
        example = ", ".join(p.id for p in next(iter(problems.values()))[:3])
        raise UsageError(
            f"{where}: unknown id {problem_id!r}: not in {', '.join(problems)} (ids look like {example})"
        )
    if len(candidates) > 1:
        raise UsageError(
            f'{where}: id {problem_id!r} exists in {" and ".join(candidates)}; add a "bench" field'
        )
    return candidates[0]


# --------------------------------------------------------------------------- grading


def _key(bench: str, problem_id: str) -> str:
    return f"{bench}/{problem_id}"


def prompt_sha(prompt: str) -> str:
    """Short fingerprint of the exact prompt text a sample was generated from."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]


GradeFn = Callable[[Sequence[tuple[str, str]], Callable[[int], None]], list[Any]]
"""``(pairs, on_done) -> verdicts``: ``grading.grade_many`` or a reused ``GradingPool.grade``."""


def grade_responses(
    items: Sequence[tuple[Response, str, str | None]], grade_fn: GradeFn, on_done: Callable[[int], None]
) -> list[SampleRecord]:
    """Grade (response, gold, prompt fingerprint) triples; ``on_done(n)``: n more are graded."""
    verdicts = grade_fn([(r.response, gold) for r, gold, _ in items], on_done)
    return [
        SampleRecord(
            bench=r.bench,
            id=r.id,
            sample=r.sample,
            response=r.response,
            extracted=v.extracted,
            gold=gold,
            correct=v.correct,
            reason=v.reason,
            num_tokens=r.num_tokens,
            finish_reason=r.finish_reason,
            prompt_sha=sha,
        )
        for (r, gold, sha), v in zip(items, verdicts, strict=True)
    ]


# --------------------------------------------------------------------------- the run


@dataclass
class EvalRun:
    """State of one run: settings, output directory, problems, sample store."""

    settings: EvalSettings
    out_dir: Path
    problems: dict[str, list[Any]]
    store: SampleStore
    prompt_info: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self._gold = {(b, p.id): p.answer for b, ps in self.problems.items() for p in ps}

    def gold(self, bench: str, problem_id: str) -> str | None:
        """The normalised answer of a problem of this run, ``None`` for one it does not evaluate."""
        return self._gold.get((bench, problem_id))


def run_evaluation(settings: EvalSettings, out_dir: str | Path) -> dict[str, Any]:
    """Generate (or read) and grade what ``out_dir`` still lacks, then write and return the metrics."""
    from infoppo_cli.eval.generation import check_model_reference, resolve_backend

    out_dir = Path(out_dir)
    store = SampleStore(out_dir)
    if settings.source == "generate":
        check_model_reference(settings.model)
        if not len(store):  # a fresh run will generate: fail on a missing GPU before any download
            resolve_backend(settings.backend)
    problems = load_problems(settings)
    saved_config = _read_config(out_dir)
    if len(store) and saved_config is None:
        raise UsageError(f"{store.path} exists but {out_dir / CONFIG_FILE} does not; use another --out")
    if saved_config is not None and len(store):
        check_compatible(saved_config["settings"], settings)
        if settings.backend is None:
            settings = dataclasses.replace(settings, backend=saved_config["settings"].get("backend"))
    run = EvalRun(settings, out_dir, problems, store, dict((saved_config or {}).get("prompt", {})))
    _check_golds(run)
    if store.dropped_torn_line:
        err_console.print(f"[yellow]note:[/] dropped a half-written last line of {store.path} (from a crash)")
    _write_config(run)
    try:
        if settings.responses is not None:
            _grade_responses_file(run)
        else:
            _generate_missing(run)
    except KeyboardInterrupt:
        err_console.print(
            f"[yellow]{len(store)} samples are saved in {store.path}; run the same command again to resume[/]"
        )
        raise
    metrics = compute_metrics(run)
    atomic_write_json(out_dir / METRICS_FILE, metrics)
    return metrics


def _read_config(out_dir: Path) -> dict[str, Any] | None:
    if saved_settings(out_dir) is None:
        return None
    return json.loads((out_dir / CONFIG_FILE).read_text(encoding="utf-8"))


def _write_config(run: EvalRun) -> None:
    settings = dataclasses.asdict(run.settings)
    settings["benches"] = list(run.settings.benches)
    atomic_write_json(run.out_dir / CONFIG_FILE, {"settings": settings, "prompt": run.prompt_info})


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
        err_console.print(
            f"resuming: {len(responses) - len(todo)} of {len(responses)} responses already graded"
        )
    covered = {(r.bench, r.id) for r in responses}
    for bench, bench_problems in run.problems.items():
        missing = sum((bench, p.id) not in covered for p in bench_problems)
        if missing:
            err_console.print(
                f"[yellow]warning:[/] the responses cover {len(bench_problems) - missing} of "
                f"{len(bench_problems)} {bench} problems; metrics use only those"
            )
    if not todo:
        return
    from infoppo_cli.grading import grade_many

    def grade_fn(pairs: Sequence[tuple[str, str]], on_done: Callable[[int], None]) -> list[Any]:
        return grade_many(
            pairs, workers=run.settings.workers, timeout=run.settings.grade_timeout, on_done=on_done
        )

    with progress_bar() as bar:
        task = bar.add_task("grading", total=len(todo))
        items = [(r, run.gold(r.bench, r.id) or "", None) for r in todo]
        records = grade_responses(items, grade_fn, lambda n: bar.advance(task, n))
    run.store.append(records)


def missing_requests(run: EvalRun, prompts: Mapping[str, str]) -> list[GenerationRequest]:
    """One request per problem that lacks some of its first ``samples`` samples."""
    requests = []
    for bench, bench_problems in run.problems.items():
        for problem in bench_problems:
            todo = tuple(i for i in range(run.settings.samples) if (bench, problem.id, i) not in run.store)
            if todo:
                key = _key(bench, problem.id)
                seed = request_seed(run.settings.seed, key, todo[0])
                requests.append(GenerationRequest(key, prompts[key], todo, seed))
    return requests


def _missing_count(run: EvalRun) -> int:
    return sum(
        (bench, problem.id, i) not in run.store
        for bench, bench_problems in run.problems.items()
        for problem in bench_problems
        for i in range(run.settings.samples)
    )


def _generate_missing(run: EvalRun) -> None:
    from infoppo_cli.eval.generation import chat_prompt, load_backend, resolve_backend

    settings = run.settings
    total = settings.samples * sum(len(ps) for ps in run.problems.values())
    missing = _missing_count(run)
    if not missing:
        return
    if missing < total:
        err_console.print(f"resuming: {total - missing} of {total} samples already in {run.store.path}")
    backend_name = resolve_backend(settings.backend)
    if backend_name == "hf" and settings.tensor_parallel > 1:
        err_console.print("[yellow]warning:[/] --tensor-parallel only applies to --backend vllm; ignored")
    with err_console.status(f"loading {settings.model} ({backend_name} backend)"):
        backend = load_backend(
            backend_name,
            settings.model,
            tensor_parallel=settings.tensor_parallel,
            seed=settings.seed,
            batch_size=settings.batch_size,
        )
    run.settings = dataclasses.replace(settings, backend=backend_name)
    prompts = {
        _key(bench, p.id): backend.format_prompt(p.problem, settings.template)
        for bench, ps in run.problems.items()
        for p in ps
    }
    first_text = next(iter(prompts.values()))
    run.prompt_info = {
        "chat_template": chat_prompt(backend.tokenizer, "x") != "x",
        "first_prompt": first_text,
    }
    _write_config(run)
    requests = missing_requests(run, prompts)
    by_key = {_key(b, p.id): (b, p) for b, ps in run.problems.items() for p in ps}
    # One pool for the whole run: its workers stay up between batches instead of restarting each time.
    from infoppo_cli.grading import GradingPool

    with GradingPool(workers=settings.workers, timeout=settings.grade_timeout) as pool, progress_bar() as bar:
        generating = bar.add_task("generating", total=missing)
        grading = bar.add_task("grading", total=missing)
        for batch in backend.generate(requests, settings.sampling):
            bar.advance(generating, len(batch))
            items = [_as_response(c, by_key, prompts) for c in batch]
            records = grade_responses(items, pool.grade, lambda n: bar.advance(grading, n))
            run.store.append(records)


def _as_response(
    completion: Completion, by_key: Mapping[str, tuple[str, Any]], prompts: Mapping[str, str]
) -> tuple[Response, str, str]:
    bench, problem = by_key[completion.key]
    response = Response(
        bench, problem.id, completion.sample, completion.text, completion.num_tokens, completion.finish_reason
    )
    return response, problem.answer, prompt_sha(prompts[completion.key])


# --------------------------------------------------------------------------- metrics and report


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
    ``average``, ``settings``, ``versions``, ``model``, ``created`` and ``per_problem`` accuracy."""
    from infoppo_cli.resources import stack_versions

    grouped = selected_records(run)
    benches: dict[str, Any] = {}
    per_problem: dict[str, Any] = {}
    for bench, problems in grouped.items():
        graded = {pid: [_graded(r) for r in records] for pid, records in problems.items()}
        if not any(graded.values()):
            err_console.print(
                f"[yellow]warning:[/] no graded samples for {bench}; it is left out of the metrics"
            )
            continue
        benches[bench] = bench_metrics(graded)
        per_problem[bench] = per_problem_accuracy(graded)
    if not benches:
        raise UsageError("no graded samples to report on")
    return {
        "benches": benches,
        "average": average_metrics(benches),
        "settings": _settings_record(run),
        "versions": stack_versions(),
        "model": run.settings.model,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "per_problem": per_problem,
    }


def _settings_record(run: EvalRun) -> dict[str, Any]:
    from infoppo_cli.eval.benchmarks import bench_spec

    settings = run.settings
    record: dict[str, Any] = {
        "source": settings.source,
        "model": settings.model,
        "responses": settings.responses,
        "benches": list(settings.benches),
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
    record["data"] = {}
    for bench in settings.benches:
        spec = bench_spec(bench)
        record["data"][bench] = {
            "data_file": settings.data_file,
            **{
                name: getattr(spec, name, None)
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


def _fmt(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def render_table(metrics: Mapping[str, Any]) -> Any:
    """A Rich table in the paper's shape (Score and Len. per bench, then the Average row)."""
    from rich.table import Table

    k = metrics["average"]["k"]
    table = Table(title=f"mean@{k} (score, %) and mean response length (tokens)")
    for column in (
        "Bench",
        "Score",
        "± SE",
        "Len.",
        f"pass@{k}",
        f"maj@{k}",
        "Trunc.",
        "No ans.",
        "Problems",
    ):
        table.add_column(column, justify="left" if column == "Bench" else "right")
    rows = [*metrics["benches"].items(), ("Average", metrics["average"])]
    for index, (name, row) in enumerate(rows):
        table.add_row(
            name,
            _fmt(row["mean@k"]),
            _fmt(row["mean@k_se"]),
            _fmt(row["length_mean"], 0),
            _fmt(row["pass@k"]),
            _fmt(row["maj@k"]),
            _percent(row["truncation_rate"]),
            _percent(row["no_answer_rate"]),
            str(row["problems"]),
            style="bold" if index == len(rows) - 1 else None,
            end_section=index == len(rows) - 2,
        )
    return table


def print_report(metrics: Mapping[str, Any], out_dir: Path) -> None:
    """Print the results table and where the files are."""
    console.print(render_table(metrics))
    console.print(f"samples: {Path(out_dir) / 'samples.jsonl'}   metrics: {Path(out_dir) / METRICS_FILE}")
