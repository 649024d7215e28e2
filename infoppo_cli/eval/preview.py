"""What ``infoppo eval --dry-run`` shows, with nothing generated: the model, the benchmarks and their
problems, the samples, the sampling settings, the backend and its engines, the expected generation volume
(prompts x samples x max tokens, less what the output directory already holds) and its time at a typical
rate; then every problem a real run would stop at (a model or benchmark that cannot be loaded here, a
backend this machine lacks, an output directory of other settings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.data.hub import HUB_MODEL_ADVICE, check_hub_model
from infoppo_cli.errors import InfoppoError
from infoppo_cli.eval.benchmarks import load_bench
from infoppo_cli.eval.engines import default_engines
from infoppo_cli.eval.generation import TYPICAL_TOKENS_PER_S, check_model_reference, resolve_backend
from infoppo_cli.eval.newest_run import ModelChoice
from infoppo_cli.eval.outdir import check_out_dir
from infoppo_cli.eval.registry import load_registry
from infoppo_cli.eval.sample_store import SampleStore
from infoppo_cli.eval.settings import EvalSettings

Rows = list[tuple[str, str]]


@dataclass
class EvalPreview:
    """The dry run's (setting, value) rows and the problems found, one line each."""

    rows: Rows = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def attempt(self, check: Callable[[], Any]) -> Any:
        """``check()``, or ``None`` with its error kept as a problem."""
        try:
            return check()
        except InfoppoError as exc:
            self.problems.append(str(exc))
            return None


def _benches(settings: EvalSettings, preview: EvalPreview) -> dict[str, int | None]:
    """Each benchmark's problem count: loaded here, else the registry's (``None`` when unknown)."""
    registry = load_registry(settings.benches_file)
    counts: dict[str, int | None] = {}
    for name in settings.benches:
        file = settings.bench_files.get(name)
        problems = preview.attempt(lambda name=name, file=file: load_bench(name, file, settings.benches_file))
        spec = registry.get(name)
        counts[name] = len(problems) if problems is not None else (spec.size if spec else None)
    return counts


def _stored(out_dir: Path, settings: EvalSettings, preview: EvalPreview) -> int:
    """Samples of these benchmarks (their first ``samples`` of each problem) already in ``out_dir``."""
    store = preview.attempt(lambda: SampleStore(out_dir))
    if store is None:
        return 0
    return sum(1 for r in store if r.bench in settings.benches and r.sample < settings.samples)


def _backend(settings: EvalSettings, preview: EvalPreview) -> tuple[str, int, str]:
    """The backend's row, the number of engines and their row."""
    name = settings.backend or "vllm"
    preview.attempt(lambda: resolve_backend(settings.backend))
    engines = settings.engines or default_engines(settings.tensor_parallel)
    where = (
        "in this process"
        if engines == 1 and settings.address is None
        else f"as Ray actors on {settings.address or 'an embedded local Ray'}"
    )
    parallel = f" x tensor parallel {settings.tensor_parallel}" if name == "vllm" else ""
    backend = name + ("" if settings.backend else " (the default)")
    return backend, engines, f"{engines}{parallel}, {where}"


def _volume(settings: EvalSettings, prompts: int, stored: int, engines: int, backend: str) -> str:
    samples = prompts * settings.samples
    todo = max(samples - stored, 0)
    tokens = todo * settings.max_tokens
    rate = TYPICAL_TOKENS_PER_S.get(backend, TYPICAL_TOKENS_PER_S["vllm"]) * engines
    hours = tokens / rate / 3600
    text = (
        f"{prompts:,} prompts x {settings.samples} samples = {samples:,} responses, each up to "
        f"{settings.max_tokens:,} tokens: at most {samples * settings.max_tokens:,} tokens"
    )
    if stored:
        text += f"; {stored:,} already in the output directory, {todo:,} to generate ({tokens:,} tokens)"
    return text + f"; up to {hours:,.1f} h at a typical {rate:,.0f} tokens/s"


def eval_preview(
    settings: EvalSettings, out_dir: str | Path, choice: ModelChoice | None = None
) -> EvalPreview:
    """The dry run of ``settings`` into ``out_dir`` (see the module); ``choice``: the model picked
    without ``--model`` (``eval.newest_run``), shown with why, or ``no model: ...`` and its problem."""
    out_dir = Path(out_dir)
    preview = EvalPreview()
    if settings.source == "generate" and settings.model is None:
        preview.rows.append(("model", choice.row() if choice else "no model: pass --model PATH_OR_HF_ID"))
        preview.problems.append(choice.problem if choice and choice.problem else "no model to evaluate")
    elif settings.source == "generate":
        model = settings.model
        preview.rows.append(("model", choice.row() if choice else model))
        if choice is not None and choice.others:
            preview.rows.append(("other runs with a final model", choice.others_text()))
        preview.attempt(lambda: check_model_reference(model))
        preview.attempt(lambda: check_hub_model(model, HUB_MODEL_ADVICE))
    else:
        preview.rows.append(("responses", f"{settings.responses} (graded; nothing is generated)"))
    counts = _benches(settings, preview)
    listed = ", ".join(f"{name} ({'?' if n is None else n} problems)" for name, n in counts.items())
    preview.rows.append(("benchmarks", listed))
    preview.rows.append(("samples per problem (k)", str(settings.samples)))
    sampling = f"temperature {settings.temperature}, top_p {settings.top_p}, seed {settings.seed}"
    preview.rows.append(("sampling", f"{sampling}; template {settings.template}"))
    preview.rows.append(("max tokens", f"{settings.max_tokens:,}"))
    preview.attempt(lambda: check_out_dir(out_dir, settings))
    stored = _stored(out_dir, settings, preview)
    if settings.source == "generate":
        backend, engines, engine_text = _backend(settings, preview)
        preview.rows.append(("backend", backend))
        preview.rows.append(("engines", engine_text))
        prompts = sum(n or 0 for n in counts.values())
        volume = _volume(settings, prompts, stored, engines, settings.backend or "vllm")
        preview.rows.append(("generation", volume))
    workers = f"{settings.workers} process(es)" if settings.workers else "a process per core"
    preview.rows.append(("grading", f"{workers}, at most {settings.grade_timeout:g} s per response"))
    unknown = settings.source == "generate" and settings.model is None
    preview.rows.append(("output", "decided by the model" if unknown else str(out_dir)))
    return preview
