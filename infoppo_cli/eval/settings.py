"""What one ``infoppo eval`` run is asked to do, declared once.

Each field of :class:`EvalSettings` carries its command-line declaration in its metadata (flags, help,
whether it is part of the evaluation's identity): ``infoppo_cli.cli.options`` builds the ``--help`` and
the Typer options from it, :data:`IDENTITY_FIELDS` (what a resumed run must agree on) is read from it,
and the defaults shown in ``--help`` are the fields' defaults.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.generation import BACKENDS, HF_BATCH_SIZE, SamplingSettings
from infoppo_cli.grading import DEFAULT_TIMEOUT

DEFAULT_SAMPLES = 16
DEFAULT_MAX_TOKENS = 10240
"""The 4B/8B presets' response length; a model from an ``infoppo train`` run directory is evaluated
with the length it was trained with instead (the paper: max tokens = training length)."""
DEFAULT_GRADE_TIMEOUT = DEFAULT_TIMEOUT

CONFIG_FILE = "eval_config.json"
ALL_BENCHES = "all"


def option(
    default: Any,
    help: str,
    *flags: str,
    identity: bool = False,
    default_text: str | None = None,
    cli_type: type | None = None,
) -> Any:
    """A settings field with its command-line declaration (read by ``infoppo_cli.cli.options``).

    ``flags``: the option's names (default ``--<field-name>``); ``identity``: samples drawn with another
    value cannot be mixed into the same output; ``default_text``: what ``--help`` shows as the default
    when it is not simply ``default``; ``cli_type``: the type on the command line when it differs.
    """
    cli = {"help": help, "flags": flags, "default_text": default_text, "cli_type": cli_type}
    return dataclasses.field(default=default, metadata={"cli": cli, "identity": identity})


@dataclass(frozen=True)
class EvalSettings:
    """Everything one evaluation run is asked to do (CLI options after defaults are applied)."""

    model: str | None = option(
        None,
        "Model directory (e.g. RUN/final) or Hugging Face id.",
        "--model",
        "-m",
        identity=True,
        default_text="",
    )
    benches: tuple[str, ...] = option(
        (ALL_BENCHES,),
        "amc23, aime24, aime25, aime26, beyondaime, a comma-separated list, or all.",
        "--bench",
        "-b",
        default_text=ALL_BENCHES,
        cli_type=str,
    )
    samples: int = option(DEFAULT_SAMPLES, "Samples per problem (k).", "--samples", "-n")
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
        "vllm (needs a CUDA GPU) or hf (transformers, also on CPU).",
        identity=True,
        default_text="vllm; without a GPU the command stops and says to pass --backend hf",
    )
    tensor_parallel: int = option(1, "GPUs per vLLM engine.")
    engines: int | None = option(
        None,
        "Generation engines, each a Ray actor; the missing samples are shared out among them.",
        default_text="visible GPUs // --tensor-parallel, at least 1",
    )
    address: str | None = option(
        None,
        "Ray cluster address for the engines (as `infoppo train --address`).",
        default_text="an embedded local Ray when more than one engine runs",
    )
    seed: int = option(
        0, "Sampling seed (each sample's seed derives from it, its problem and its index).", identity=True
    )
    data_file: str | None = option(
        None,
        "Local jsonl/parquet/csv/json file replacing one bench's Hub data.",
        identity=True,
        default_text="",
    )
    responses: str | None = option(
        None,
        "Grade this JSONL of existing responses (id, sample, response[, num_tokens, finish_reason]) "
        "instead of generating.",
        identity=True,
        default_text="",
    )
    workers: int | None = option(None, "Grading processes.", default_text="all cores")
    grade_timeout: float = option(
        DEFAULT_GRADE_TIMEOUT, "Seconds before one response's grading is abandoned."
    )
    batch_size: int = option(HF_BATCH_SIZE, "Sequences per generate() call with --backend hf.")

    def __post_init__(self) -> None:
        from infoppo_cli.data.templates import TEMPLATES

        for name in ("samples", "tensor_parallel", "batch_size", "workers", "engines"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
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


IDENTITY_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(EvalSettings) if f.metadata.get("identity")
)
"""Settings that decide which responses get sampled: a resumed run must agree on all of them."""

_LOCAL_PATH_FIELDS = ("model", "data_file", "responses")


def parse_benches(selection: str) -> tuple[str, ...]:
    """``"aime24,aime25"`` or ``"all"`` to a tuple of registry names (unknown names: UsageError)."""
    from infoppo_cli.eval.benchmarks import resolve_bench_names

    return tuple(resolve_bench_names(selection))


def default_out_dir(model: str | None, responses: str | None) -> Path:
    """Where results go without ``--out``: ``RUN/eval`` for a model of an ``infoppo train`` run (so
    ``infoppo report RUN`` finds them), else ``evals/<model, slugged>`` (or ``evals/responses-<stem>``).
    Stable, so that rerunning the same command resumes it."""
    from infoppo_cli.rundir import run_of_model

    if responses is not None:
        return Path("evals") / f"responses-{Path(responses).stem}"
    run = run_of_model(model) if model else None
    if run is not None:
        return run.eval
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
    for name in _LOCAL_PATH_FIELDS:  # local paths: absolute, so --resume works anywhere
        if isinstance(chosen.get(name), str) and Path(chosen[name]).expanduser().exists():
            chosen[name] = str(Path(chosen[name]).expanduser().resolve())
    if "max_tokens" not in chosen and chosen.get("model"):
        from infoppo_cli.rundir import trained_response_length

        trained = trained_response_length(chosen["model"])
        if trained is not None:
            chosen["max_tokens"] = trained
    benches = chosen.pop("benches", ALL_BENCHES)
    chosen["benches"] = parse_benches(benches if isinstance(benches, str) else ",".join(benches))
    known = {f.name for f in dataclasses.fields(EvalSettings)}
    return EvalSettings(**{name: value for name, value in chosen.items() if name in known})


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
