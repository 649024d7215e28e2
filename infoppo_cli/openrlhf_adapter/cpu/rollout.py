"""The CPU rollout engine: OpenRLHF's rollout actor with transformers generating where vLLM would.

OpenRLHF's ``SamplesGenerator`` calls ``generate_responses`` on each engine (upstream's method: it
runs the agent executor, which tokenises, calls :meth:`CpuRolloutEngine.generate` and grades with the
reward function) and ``get_num_unfinished_requests``, ``wake_up`` and ``sleep``; the actor worker
sends the trained weights after each RL step (here :meth:`CpuRolloutEngine.update_weights`, an
object-store reference, where a GPU run broadcasts over NCCL). Concurrent ``generate`` calls are
gathered into one batch per sampling setting, as vLLM batches its requests, and drawn by the
transformers sampler (:mod:`infoppo_cli.data.sampler`, torch's global stream).
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import ray
import torch
from openrlhf.trainer.ray.vllm_engine import RolloutRayActor

from infoppo_cli.data.sampler import Sampled, Sampling, pad_token_id, sample_batch, stop_token_ids
from infoppo_cli.openrlhf_adapter.cpu.torch_device import cpu_threads

_UpstreamRollout = getattr(RolloutRayActor, "__ray_actor_class__", RolloutRayActor)
SETTLE_SECONDS = 0.02
"""How long the engine waits for more requests to join a batch once the queue stops growing."""
MAX_BATCH = 256


@dataclass
class _Request:
    prompt: list[int]
    params: Any
    future: asyncio.Future


def _sampling_key(params: Any) -> tuple:
    return tuple(
        getattr(params, name, None)
        for name in ("temperature", "top_p", "top_k", "max_tokens", "min_tokens", "logprobs", "ignore_eos")
    ) + (tuple(getattr(params, "stop_token_ids", None) or ()),)


class CpuRolloutEngine(_UpstreamRollout):
    """A rollout engine on the CPU with the interface of OpenRLHF's ``RolloutRayActor``."""

    def __init__(
        self,
        model: str,
        seed: int = 0,
        max_model_len: int | None = None,
        remote_rm_url: Any = None,
        agent_func_path: str | None = None,
        **unused: Any,
    ) -> None:
        from openrlhf.utils.agent import SingleTurnAgentExecutor
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from infoppo_cli.openrlhf_adapter.cpu.stand_ins import install

        install()
        torch.set_num_threads(cpu_threads())
        torch.manual_seed(seed)
        if agent_func_path:
            raise ValueError("the CPU rollout engine runs single-turn rollouts only (no agent_func_path)")
        self.executor = SingleTurnAgentExecutor(remote_rm_url)
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        # loaded in bf16 as vLLM (dtype bfloat16) and the actor (ds.param_dtype bf16) load it, so that all
        # three start from the same values; computed in float32, as the CPU strategy trains
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.bfloat16).float().eval()
        self.max_model_len = max_model_len
        self.stop_ids = sorted(stop_token_ids(self.tokenizer, self.model.generation_config))
        self._queue: list[_Request] = []
        self._worker: asyncio.Task | None = None
        self.weight_updates = 0

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        """One completion of ``prompt_token_ids``: ``.outputs[0]`` has ``token_ids``,
        ``finish_reason`` (``stop`` or ``length``) and ``logprobs``, as vLLM's ``RequestOutput``."""
        if multi_modal_data:
            raise ValueError("the CPU rollout engine generates text only")
        future = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(list(prompt_token_ids), sampling_params, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._queue:
            await self._settle()
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            groups: dict[tuple, list[_Request]] = {}
            for request in batch:
                groups.setdefault(_sampling_key(request.params), []).append(request)
            for requests in groups.values():
                try:
                    outputs = self._sample([r.prompt for r in requests], requests[0].params)
                except Exception as exc:  # every waiting caller sees the failure
                    for request in requests:
                        request.future.set_exception(exc)
                    continue
                for request, output in zip(requests, outputs, strict=True):
                    request.future.set_result(output)

    async def _settle(self) -> None:
        seen = -1
        while len(self._queue) != seen and len(self._queue) < MAX_BATCH:
            seen = len(self._queue)
            await asyncio.sleep(SETTLE_SECONDS)

    def _sample(self, prompts: list[list[int]], params: Any) -> list[SimpleNamespace]:
        return [
            _request_output(drawn)
            for drawn in sample_batch(self.model, prompts, self._sampling(prompts, params))
        ]

    def _sampling(self, prompts: list[list[int]], params: Any) -> Sampling:
        """vLLM's ``SamplingParams`` as the transformers sampler's settings (torch's global stream);
        the budget is cut so that no sequence outgrows ``max_model_len``."""
        stops = frozenset(self.stop_ids) | frozenset(params.stop_token_ids or ())
        budget = int(params.max_tokens or 16)
        if self.max_model_len:
            budget = max(1, min(budget, self.max_model_len - max(len(p) for p in prompts)))
        return Sampling(
            max_new_tokens=budget,
            stop_ids=stops,
            pad_id=pad_token_id(self.tokenizer, self.stop_ids),
            temperature=float(params.temperature or 0.0),
            top_p=float(params.top_p or 1.0),
            top_k=int(params.top_k or 0),
            min_new_tokens=int(params.min_tokens or 0),
            ignore_eos=bool(params.ignore_eos),
            logprobs=params.logprobs is not None,
        )

    def update_weights(self, state: dict[str, torch.Tensor]) -> int:
        """Load the actor's parameters (an object-store copy); returns the update count. A tied
        output embedding arrives once, under the input embedding's name."""
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        tied = {name for name in missing if "lm_head" in name and self.model.config.tie_word_embeddings}
        if unexpected or set(missing) - tied:
            raise ValueError(
                f"weights do not fit the rollout model: missing {missing}, unexpected {unexpected}"
            )
        self.weight_updates += 1
        return self.weight_updates

    def weights_digest(self) -> dict[str, str]:
        """A hash of every parameter (tests compare it with the actor's)."""
        return parameter_digest(self.model)

    def get_num_unfinished_requests(self) -> int:
        return len(self._queue)

    async def sleep(self, level: int = 1) -> None:
        return None

    async def wake_up(self, tags=None) -> None:
        return None

    async def reset_prefix_cache(self) -> None:
        return None

    async def init_process_group(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "the CPU rollout engine receives weights through Ray's object store (update_weights)"
        )

    async def update_weight(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "the CPU rollout engine receives weights through Ray's object store (update_weights)"
        )


def _request_output(drawn: Sampled) -> SimpleNamespace:
    """One sample as vLLM's ``RequestOutput`` carries it: ``.outputs[0]`` with ``token_ids``,
    ``finish_reason`` and ``logprobs`` (``{token: .logprob}`` per token, when asked for)."""
    logprobs = None
    if drawn.logprobs is not None:
        logprobs = [
            {token: SimpleNamespace(logprob=logprob)}
            for token, logprob in zip(drawn.token_ids, drawn.logprobs, strict=True)
        ]
    output = SimpleNamespace(token_ids=drawn.token_ids, finish_reason=drawn.finish_reason, logprobs=logprobs)
    return SimpleNamespace(outputs=[output])


def parameter_digest(model: torch.nn.Module) -> dict[str, str]:
    """``name -> sha256`` of every named parameter's float32 bytes."""
    return {
        name: hashlib.sha256(param.detach().float().contiguous().numpy().tobytes()).hexdigest()
        for name, param in model.named_parameters()
    }


def create_cpu_engines(
    num_engines: int,
    tensor_parallel_size: int,
    pretrain: str,
    seed: int,
    full_determinism: bool,
    enable_prefix_caching: bool,
    enforce_eager: bool,
    max_model_len: int,
    shared_pg=None,
    gpu_memory_utilization=None,
    vllm_enable_sleep=False,
    logprobs_mode=None,
    agent_func_path: str | None = None,
    remote_rm_url: Any = None,
    max_images_per_prompt: int = 0,
) -> list:
    """What ``train()`` gets from ``create_vllm_engines`` (same signature), on CPUs."""
    if tensor_parallel_size != 1 or max_images_per_prompt:
        raise ValueError("the CPU rollout engine runs one text model per engine (tensor parallel 1)")
    engine = ray.remote(num_cpus=0)(CpuRolloutEngine)
    return [
        engine.remote(
            pretrain,
            seed=seed + index,
            max_model_len=max_model_len,
            remote_rm_url=remote_rm_url,
            agent_func_path=agent_func_path,
        )
        for index in range(num_engines)
    ]
