"""The rollout engines of a CPU run: OpenRLHF's own ``create_vllm_engines`` and ``RolloutRayActor``, with
vLLM's CPU build generating, placed on CPU bundles.

Upstream's ``create_vllm_engines`` asks Ray for one ``{"GPU": 1, "CPU": 1}`` bundle per engine and
builds each engine with ``num_gpus=1``; a machine without GPUs never grants either. What is replaced
(each a row of ``openrlhf_adapter.patches.PATCHES``), in the driver:

* ``vllm_engine.placement_group``: :func:`cpu_bundles`, the same placement group with the GPU taken
  out of every bundle;
* ``vllm_engine.RolloutRayActor``: :data:`CPU_ROLLOUT_ACTOR`, upstream's class built with no GPU, as
  :class:`CpuRolloutRayActor`: upstream's ``__init__`` (vLLM's ``AsyncLLMEngine``, the agent executor,
  ``generate``, ``generate_responses``) after the CPU engine's environment (:func:`engine_environment`),
  with the worker extension that receives weights on the CPU (``weight_sync.CpuWorkerWrap``).

The sample generator, the weight sync and the in-training eval call these engines exactly as a GPU
run's (``weight_sync`` for the one part of the sync that differs).
"""

from __future__ import annotations

import os
from typing import Any

import openrlhf.trainer.ray.vllm_engine as vllm_engine
import ray
from openrlhf.trainer.ray.vllm_engine import RolloutRayActor
from ray.util.placement_group import placement_group

from infoppo_cli.openrlhf_adapter.cpu.torch_device import cpu_threads
from infoppo_cli.openrlhf_adapter.cpu.weight_sync import WORKER_EXTENSION

_UpstreamRollout = RolloutRayActor.__ray_actor_class__

KV_CACHE_GIB = 1
"""vLLM's CPU KV cache per engine, in GiB (``VLLM_CPU_KVCACHE_SPACE``; vLLM's own default takes a
share of the machine's memory): enough for a tiny model's batch, kept unless the user set it."""


def engine_environment(threads: int) -> dict[str, str]:
    """The variables vLLM's CPU backend reads in an engine's process: its KV cache (unless set), no
    pinning of its threads to cores (its default pins every engine to the same first core), their
    number, and the model run in the engine core's process: otherwise vLLM's CPU platform runs it in a
    process of its own, one more start of torch and vLLM per engine (its reason, setting the OpenMP
    pinning up there, does not apply to unpinned threads); and no usage report (vLLM's default sends
    one to its server from a thread that first runs a ``cpuinfo`` process: a second of a core per
    engine, and a call home nobody asked for), unless the user set it."""
    return {
        "VLLM_NO_USAGE_STATS": os.environ.get("VLLM_NO_USAGE_STATS", "1"),
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", str(KV_CACHE_GIB)),
        "VLLM_CPU_OMP_THREADS_BIND": os.environ.get("VLLM_CPU_OMP_THREADS_BIND", "nobind"),
        "OMP_NUM_THREADS": str(max(threads, 1)),
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    }


class CpuRolloutRayActor(_UpstreamRollout):
    """Upstream's rollout engine with vLLM's CPU backend."""

    async def __init__(self, *args: Any, **kwargs: Any) -> None:
        os.environ.update(engine_environment(cpu_threads()))
        kwargs["worker_extension_cls"] = WORKER_EXTENSION
        await super().__init__(*args, **kwargs)

    async def loaded_checksum(self) -> tuple[float, float] | None:
        """The checksum of the weights the engine's worker last loaded from the actor."""
        (checksum,) = await self.llm.collective_rpc("loaded_checksum")
        return None if checksum is None else tuple(checksum)


ENGINE_CPU_SHARE = 0.01
"""The CPU an engine's bundle reserves: a token amount, as the model workers' (``workers``), so that the
engines of a run with several never crowd out the trainer's own actor; threads, not Ray's accounting,
divide the cores."""


class _PlacedWithoutGpu:
    """A Ray actor class as ``create_vllm_engines`` uses it (``.options(...).remote(...)``), asking Ray
    for no GPU and a token share of a CPU whatever it is told."""

    def __init__(self, actor_class: Any) -> None:
        self.actor_class = actor_class

    def options(self, **options: Any) -> Any:
        return self.actor_class.options(**{**options, "num_gpus": 0, "num_cpus": ENGINE_CPU_SHARE})


CPU_ROLLOUT_ACTOR = _PlacedWithoutGpu(ray.remote(num_gpus=0)(CpuRolloutRayActor))


def cpu_bundles(bundles: list[dict[str, float]], strategy: str = "PACK", **kwargs: Any):
    """Ray's ``placement_group`` with CPU bundles: no GPU, a token share of a CPU each."""
    return placement_group([{"CPU": ENGINE_CPU_SHARE} for _ in bundles], strategy=strategy, **kwargs)


def place_engines_on_cpus() -> None:
    """Make upstream's ``create_vllm_engines`` (this process) build CPU engines on CPU bundles."""
    vllm_engine.placement_group = cpu_bundles
    vllm_engine.RolloutRayActor = CPU_ROLLOUT_ACTOR
