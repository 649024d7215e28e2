"""Sampling responses for evaluation: a vLLM backend (GPU) and a Hugging Face transformers backend.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from infoppo_cli.errors import EnvironmentProblem, UsageError

BACKENDS: tuple[str, ...] = ("vllm", "hf")
FINISH_REASONS: tuple[str, ...] = ("stop", "length")

HF_BATCH_SIZE = 32
"""Sequences per ``generate()`` call in the transformers backend."""

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
        if not self.temperature >= 0:
            raise UsageError(f"--temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise UsageError(f"--top-p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise UsageError(f"--max-tokens must be >= 1, got {self.max_tokens}")


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt and the sample indices to draw for it; ``key`` is the caller's handle."""

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


def request_seed(seed: int, key: str, first_sample: int) -> int:
    """A per-request seed derived from the run seed, the problem and its first missing sample.

    Stable across processes and runs (unlike ``hash``), so the same command samples the same
    responses, and a resumed run draws different ones for the samples it adds.
    """
    digest = hashlib.sha256(f"{seed}\0{key}\0{first_sample}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def chat_prompt(tokenizer: Any, text: str) -> str:
    """Wrap ``text`` as one user turn with the tokenizer's chat template, as OpenRLHF's
    ``--data.apply_chat_template`` does; the raw text when the tokenizer has no template."""
    if not getattr(tokenizer, "chat_template", None):
        return text
    messages = [{"role": "user", "content": text}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def build_prompt(tokenizer: Any, problem: str, template: str) -> str:
    """The training prompt for ``problem``: ``templates.render_prompt`` inside the chat template."""
    from infoppo_cli.data.templates import render_prompt

    return chat_prompt(tokenizer, render_prompt(problem, template))


def prompt_token_ids(tokenizer: Any, prompt: str) -> list[int]:
    """Token ids of an already templated prompt (special tokens come from the template itself)."""
    return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])


def stop_token_ids(tokenizer: Any, generation_config: Any = None) -> set[int]:
    """End-of-sequence ids: the tokenizer's eos plus any listed in the model's generation config."""
    ids: set[int] = set()
    for source in (
        getattr(tokenizer, "eos_token_id", None),
        getattr(generation_config, "eos_token_id", None),
    ):
        if isinstance(source, int):
            ids.add(source)
        elif source is not None:
            ids.update(int(i) for i in source)
    if not ids:
        raise UsageError("the tokenizer defines no end-of-sequence token, so generation could never stop")
    return ids


def trim_at_stop(token_ids: Sequence[int], stop_ids: set[int]) -> tuple[list[int], str]:
    """Cut generated ids after the first stop token (kept, as vLLM keeps it) and say why it ended.

    Everything after the first stop token is padding from batched generation.
    """
    for position, token in enumerate(token_ids):
        if token in stop_ids:
            return list(token_ids[: position + 1]), "stop"
    return list(token_ids), "length"


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU."""
    import torch

    return torch.cuda.is_available()


def resolve_backend(name: str | None) -> str:
    """The backend to use: ``name`` if given, else vLLM on a CUDA machine.

    Without a GPU there is no silent fall-back to the (much slower) transformers backend: the
    user is told to ask for it explicitly.
    """
    if name is None:
        name = "vllm"
    if name not in BACKENDS:
        raise UsageError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    if name == "vllm":
        _require_vllm()
    return name


def _require_vllm() -> None:
    """Raise :class:`EnvironmentProblem` unless a CUDA GPU and the vllm package are both present."""
    import importlib.util

    if not cuda_available():
        raise EnvironmentProblem(
            "the vLLM backend needs a CUDA GPU and none was found; pass --backend hf to generate "
            "with transformers instead (works on CPU, practical only for small models)"
        )
    if importlib.util.find_spec("vllm") is None:
        raise EnvironmentProblem(
            "vLLM is not installed: `pip install 'infoppo[gpu]'` (vllm==0.29.0), or pass --backend hf"
        )


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


def load_tokenizer(model: str) -> Any:
    """``AutoTokenizer.from_pretrained(model)``, with loading failures as one clear line."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot load the tokenizer of {model!r}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def load_backend(
    name: str,
    model: str,
    *,
    tensor_parallel: int = 1,
    seed: int = 0,
    batch_size: int = HF_BATCH_SIZE,
) -> Backend:
    """Load ``model`` into the named backend (``"vllm"`` or ``"hf"``)."""
    check_model_reference(model)
    if name == "vllm":
        return VLLMBackend(model, tensor_parallel=tensor_parallel, seed=seed)
    if name == "hf":
        return HFBackend(model, batch_size=batch_size)
    raise UsageError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")


# --------------------------------------------------------------------------- transformers backend


class HFBackend:
    """Batched sampling with ``transformers`` ``generate``: CPU or a single GPU, small models.

    Each batch is seeded from its first sample's request, so a run is reproducible for the same
    seed, batch size and set of missing samples (vLLM's per-request seeds do not depend on batching).
    """

    name = "hf"

    def __init__(self, model: str, batch_size: int = HF_BATCH_SIZE) -> None:
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # the evaluation's own progress bars are enough
        if batch_size < 1:
            raise UsageError(f"--batch-size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.tokenizer = load_tokenizer(model)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        use_bf16 = self.device.type == "cuda" and torch.cuda.is_bf16_supported()
        try:
            self.model = AutoModelForCausalLM.from_pretrained(
                model, dtype=torch.bfloat16 if use_bf16 else torch.float32, attn_implementation="sdpa"
            )
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot load the model {model!r}: {_first_line(exc)}") from exc
        self.model.to(self.device).eval()
        self.stop_ids = stop_token_ids(self.tokenizer, self.model.generation_config)
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(self.stop_ids)

    def format_prompt(self, problem: str, template: str) -> str:
        return build_prompt(self.tokenizer, problem, template)

    def generation_config(self, sampling: SamplingSettings) -> Any:
        """An explicit ``GenerationConfig``: only the given settings shape the distribution."""
        from transformers import GenerationConfig

        greedy = sampling.temperature == 0
        return GenerationConfig(
            do_sample=not greedy,
            temperature=None if greedy else sampling.temperature,
            top_p=None if greedy else sampling.top_p,
            top_k=0,
            typical_p=1.0,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            max_new_tokens=sampling.max_tokens,
            eos_token_id=sorted(self.stop_ids),
            pad_token_id=self.pad_id,
        )

    def generate(
        self, requests: Sequence[GenerationRequest], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        import torch

        rows = [(request, sample) for request in requests for sample in request.sample_indices]
        token_ids = {request.key: prompt_token_ids(self.tokenizer, request.prompt) for request in requests}
        config = self.generation_config(sampling)
        for start in range(0, len(rows), self.batch_size):
            batch = rows[start : start + self.batch_size]
            first_request, first_sample = batch[0]
            torch.manual_seed(request_seed(first_request.seed, first_request.key, first_sample))
            input_ids, attention_mask = self._left_padded([token_ids[r.key] for r, _ in batch])
            with torch.no_grad():
                output = self.model.generate(
                    input_ids=input_ids, attention_mask=attention_mask, generation_config=config
                )
            generated = output[:, input_ids.shape[1] :].tolist()
            yield [self._completion(r, s, ids) for (r, s), ids in zip(batch, generated, strict=True)]

    def _left_padded(self, prompts: list[list[int]]) -> tuple[Any, Any]:
        import torch

        width = max(len(ids) for ids in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            if ids:
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention_mask[row, width - len(ids) :] = 1
        return input_ids.to(self.device), attention_mask.to(self.device)

    def _completion(self, request: GenerationRequest, sample: int, ids: list[int]) -> Completion:
        kept, finish_reason = trim_at_stop(ids, self.stop_ids)
        text = self.tokenizer.decode(kept, skip_special_tokens=True)
        return Completion(request.key, sample, text, len(kept), finish_reason)


# --------------------------------------------------------------------------- vLLM backend


def vllm_engine_kwargs(model: str, tensor_parallel: int, seed: int) -> dict[str, Any]:
    """Keyword arguments for ``vllm.LLM``."""
    if tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be >= 1, got {tensor_parallel}")
    return {
        "model": model,
        "tensor_parallel_size": tensor_parallel,
        "seed": seed,
        "dtype": "auto",
        "trust_remote_code": False,
    }


def vllm_sampling_params(sampling: SamplingSettings, request: GenerationRequest) -> Any:
    """``vllm.SamplingParams`` for one request: all its missing samples in one seeded request."""
    from vllm import SamplingParams

    return SamplingParams(
        n=len(request.sample_indices),
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        max_tokens=sampling.max_tokens,
        seed=request.seed,
    )


def completions_from_vllm(request: GenerationRequest, output: Any) -> list[Completion]:
    """Turn one vLLM ``RequestOutput`` (``n`` samples) into completions for the request's indices."""
    samples = sorted(output.outputs, key=lambda sample: sample.index)
    if len(samples) != len(request.sample_indices):
        raise RuntimeError(
            f"vLLM returned {len(samples)} samples for {request.key}, expected {len(request.sample_indices)}"
        )
    completions = []
    for index, sample in zip(request.sample_indices, samples, strict=True):
        if sample.finish_reason not in FINISH_REASONS:  # e.g. "abort": not a sample to score
            raise RuntimeError(f"vLLM ended sample {index} of {request.key} with {sample.finish_reason!r}")
        completions.append(
            Completion(request.key, index, sample.text, len(sample.token_ids), sample.finish_reason)
        )
    return completions


class VLLMBackend:
    """vLLM offline engine: one request with ``n`` seeded samples per prompt, tensor parallel."""

    name = "vllm"

    def __init__(
        self, model: str, tensor_parallel: int = 1, seed: int = 0, chunk_prompts: int = VLLM_CHUNK_PROMPTS
    ) -> None:
        kwargs = vllm_engine_kwargs(model, tensor_parallel, seed)
        _require_vllm()
        import vllm

        self.tokenizer = load_tokenizer(model)
        self.chunk_prompts = chunk_prompts
        self.llm = vllm.LLM(**kwargs)

    def format_prompt(self, problem: str, template: str) -> str:
        return build_prompt(self.tokenizer, problem, template)

    def generate(
        self, requests: Sequence[GenerationRequest], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        from vllm.inputs import TokensPrompt

        for start in range(0, len(requests), self.chunk_prompts):
            chunk = list(requests[start : start + self.chunk_prompts])
            prompts = [
                TokensPrompt(prompt_token_ids=prompt_token_ids(self.tokenizer, r.prompt)) for r in chunk
            ]
            params = [vllm_sampling_params(sampling, r) for r in chunk]
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
            yield [c for r, out in zip(chunk, outputs, strict=True) for c in completions_from_vllm(r, out)]
