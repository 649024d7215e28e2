"""The vLLM generation backend (a CUDA GPU, a tensor-parallel group of them, or vLLM's CPU build).

Each sample is its own request (``n=1``) seeded with :func:`~infoppo_cli.eval.generation.sample_seed`:
vLLM seeds a request's sampler from ``SamplingParams.seed`` alone, so a sample's text does not depend on
which other requests share the batch, the chunk or the engine (resume and data-parallel engines draw
the same samples). The prompt's KV cache is shared between a problem's samples by vLLM's automatic
prefix caching, so splitting ``n`` into seeded requests costs no prefill.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from infoppo_cli.data.sampler import FINISH_REASONS
from infoppo_cli.data.templates import build_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.eval import generation
from infoppo_cli.eval.generation import (
    VLLM_CHUNK_PROMPTS,
    Completion,
    GenerationRequest,
    SamplingSettings,
    load_tokenizer,
    prompt_token_ids,
    sample_seed,
)

CPU_ENGINE = {"enforce_eager": True, "distributed_executor_backend": "uni", "enable_chunked_prefill": False}
"""vLLM's CPU build: no graph capture (a CUDA feature; compiling instead costs minutes on a CPU), the
model in the engine's own process, and whole prefills: vLLM 0.29 rewinds a seeded request's random
generator when a chunked prefill discards its token, which a CPU generator refuses ("CPU Generator does
not use offset"), and every sample here is a seeded request."""


def vllm_engine_kwargs(model: str, tensor_parallel: int, seed: int, on_cpu: bool = False) -> dict[str, Any]:
    """Keyword arguments for ``vllm.LLM`` (``on_cpu``: vLLM's CPU build, one process per engine)."""
    if tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be >= 1, got {tensor_parallel}")
    if on_cpu and tensor_parallel != 1:
        raise UsageError("--tensor-parallel is for GPUs; on a CPU each engine is one process (--engines N)")
    kwargs: dict[str, Any] = {
        "model": model,
        "tensor_parallel_size": tensor_parallel,
        "seed": seed,
        "dtype": "auto",
        "trust_remote_code": False,
    }
    return {**kwargs, **CPU_ENGINE} if on_cpu else kwargs


def vllm_sampling_params(sampling: SamplingSettings, request: GenerationRequest, sample: int) -> Any:
    """``vllm.SamplingParams`` for one sample of ``request``: ``n=1`` with the sample's own seed."""
    from vllm import SamplingParams  # lazy: only for the vllm backend

    return SamplingParams(
        n=1,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        max_tokens=sampling.max_tokens,
        seed=sample_seed(request.seed, request.key, sample),
    )


def torch_threads() -> int:
    """The threads this process's torch uses (a Ray engine's share of the cores, set by its actor)."""
    import torch  # lazy: only for the vllm backend

    return torch.get_num_threads()


def completion_from_vllm(request: GenerationRequest, sample: int, output: Any) -> Completion:
    """Turn the ``RequestOutput`` of one sample's request into a completion."""
    if len(output.outputs) != 1:
        raise RuntimeError(f"vLLM returned {len(output.outputs)} outputs for {request.key} sample {sample}")
    (result,) = output.outputs
    if result.finish_reason not in FINISH_REASONS:  # e.g. "abort": not a sample to score
        raise RuntimeError(f"vLLM ended sample {sample} of {request.key} with {result.finish_reason!r}")
    return Completion(request.key, sample, result.text, len(result.token_ids), result.finish_reason)


class VLLMBackend:
    """vLLM offline engine: one seeded request per sample, tensor parallel."""

    name = "vllm"

    def __init__(
        self, model: str, tensor_parallel: int = 1, seed: int = 0, chunk_prompts: int = VLLM_CHUNK_PROMPTS
    ) -> None:
        on_cpu = not generation.cuda_available()
        kwargs = vllm_engine_kwargs(model, tensor_parallel, seed, on_cpu)
        generation.require_vllm()
        if on_cpu:
            from infoppo_cli.openrlhf_adapter.cpu import rollout  # lazy: imports ray and openrlhf; CPU only

            os.environ.update(rollout.engine_environment(torch_threads()))
        import vllm  # lazy: only for the vllm backend, after its environment

        self.tokenizer = load_tokenizer(model)
        self.chunk_prompts = chunk_prompts
        self.llm = vllm.LLM(**kwargs)

    def format_prompt(self, problem: str, template: str) -> str:
        return build_prompt(self.tokenizer, problem, template)

    def generate(
        self, requests: Sequence[GenerationRequest], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        from vllm.inputs import TokensPrompt  # lazy: only for the vllm backend

        for start in range(0, len(requests), self.chunk_prompts):
            rows = [(r, s) for r in requests[start : start + self.chunk_prompts] for s in r.sample_indices]
            token_ids = {r.key: prompt_token_ids(self.tokenizer, r.prompt) for r, _ in rows}
            prompts = [TokensPrompt(prompt_token_ids=token_ids[r.key]) for r, _ in rows]
            params = [vllm_sampling_params(sampling, r, s) for r, s in rows]
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
            yield [completion_from_vllm(r, s, out) for (r, s), out in zip(rows, outputs, strict=True)]
