"""The plan's checks of where a run trains (the devices themselves: ``openrlhf_adapter/device.py``). A
run that takes no GPUs trains on this machine's CPU and is for tiny models: a plan that would not fit
this machine's memory, take hours per step, or ask for more training workers than cores is refused
before anything starts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import psutil

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.checkpoints import model_parameters
from infoppo_cli.openrlhf_adapter.device import DEVICES

CPU_FLOPS_PER_CORE = 2e10
"""Sustained float32 matmul throughput of one core, for the estimate (a modern x86 core with AVX2)."""
CPU_STEP_LIMIT_S = 3600.0
TRAIN_BYTES_PER_PARAM = 16
"""fp32 weights, gradients and AdamW's two moments."""
CPU_INCOMPATIBLE = {
    "ds.packing_samples": "packing needs flash-attn's CUDA kernels",
    "train.dynamic_batch_enable": "dynamic batching packs samples (flash-attn's CUDA kernels)",
    "train.colocate_all": "the hybrid engine shares GPUs between vLLM and DeepSpeed",
    "vllm.enable_sleep": "vLLM's sleep mode needs CUDA",
    "vllm.sync_with_ray": "Ray's gloo collective cannot open a group beside DeepSpeed's and vLLM's own",
    "ds.enable_sleep": "DeepSpeed's offload between phases needs CUDA",
    "ds.adam_offload": "DeepSpeed's CPU Adam offload is for GPU runs",
}


def device_flags(device: str) -> dict[str, Any]:
    """The OpenRLHF flags ``device`` sets on every run."""
    return dict(DEVICES[device].engine_flags)


@dataclass(frozen=True)
class CpuCost:
    """Rough memory and time of one RL step on this machine's CPU."""

    params: float
    memory_bytes: float
    step_seconds: float


def cpu_cost(params: float, flags: dict[str, Any], with_critic: bool) -> CpuCost:
    """Memory: actor (and critic) trained with AdamW in fp32 plus the rollout engine's copy. Time:
    2 FLOPs per parameter per token to generate and to score the old policy (and the critic), 6 to
    train, over every token of one RL step's responses."""
    models = 2 if with_critic else 1
    memory = params * (TRAIN_BYTES_PER_PARAM * models + 4)
    responses = int(flags["rollout.batch_size"]) * int(flags["rollout.n_samples_per_prompt"])
    tokens = responses * int(flags["data.max_len"])
    epochs = int(flags.get("train.max_epochs", 1))
    flops = params * tokens * (2 + 2 * models + 6 * models * epochs)
    return CpuCost(params, memory, flops / (CPU_FLOPS_PER_CORE * (os.cpu_count() or 1)))


def _total_memory() -> float:
    return float(psutil.virtual_memory().total)


def check_device(
    device: str, flags: dict[str, Any], with_critic: bool, params: float | None = None
) -> CpuCost | None:
    """Refuse a CPU run this machine cannot hold or finish (one line, with the estimate), and the flags
    a CPU run cannot honour; returns the estimate for the plan (``params``: the model's size when its
    directory cannot tell it yet, a task a dry run did not build)."""
    if DEVICES[device].uses_gpus:
        return None
    for flag, why in CPU_INCOMPATIBLE.items():
        if flags.get(flag):
            raise UsageError(f"--device cpu cannot run with {flag}: {why}; drop it (--set {flag}=false)")
    for flag, needed in DEVICES[device].engine_flags.items():
        if flags.get(flag) != needed:
            raise UsageError(f"--device cpu runs its vLLM engines with {flag}={needed}; drop --set {flag}")
    if int(flags.get("ds.ring_attn_size", 1)) > 1:
        raise UsageError(
            "--device cpu cannot run ring attention (ds.ring_attn_size > 1): it needs flash-attn"
        )
    if "flash_attention" in str(flags.get("ds.attn_implementation", "flash_attention_2")):
        raise UsageError(
            "--device cpu needs --set ds.attn_implementation=sdpa (flash-attn has no CPU kernels)"
        )
    model = str(flags["actor.model_name_or_path"])
    params = model_parameters(model) if params is None else params
    if params is None:
        raise UsageError(f"--device cpu: cannot tell the size of {model}; CPU runs are for tiny local models")
    cost = cpu_cost(params, flags, with_critic)
    memory = _total_memory()
    if cost.memory_bytes > 0.8 * memory or cost.step_seconds > CPU_STEP_LIMIT_S:
        raise UsageError(
            f"--device cpu: {model} ({params / 1e9:.3g}B parameters) needs about "
            f"{cost.memory_bytes / 2**30:,.0f} GiB (this machine has {memory / 2**30:,.0f}) and about "
            f"{cost.step_seconds / 3600:,.1f} hours per RL step here; CPU runs are for tiny models "
            "(--preset tiny-cpu), train this one on GPUs"
        )
    _check_cpu_workers(flags)
    return cost


def _check_cpu_workers(flags: dict[str, Any]) -> None:
    """A CPU run trains on this machine: one node, and no more data-parallel workers per model than
    cores (``--gpus-per-node`` counts CPU workers there)."""
    if int(flags["actor.num_nodes"]) != 1:
        raise UsageError("--device cpu trains on this machine: --nodes must be 1")
    workers, cores = int(flags["actor.num_gpus_per_node"]), os.cpu_count() or 1
    if workers > cores:
        raise UsageError(
            f"--device cpu: {workers} training workers per model need {workers} cores and this machine "
            f"has {cores}; lower --gpus-per-node (it counts CPU workers on a CPU run)"
        )


def describe_cost(cost: CpuCost) -> str:
    """The plan's line for a CPU run."""
    return (
        f"CPU: {cost.params / 1e6:.2f}M parameters, about {cost.memory_bytes / 2**20:,.0f} MiB for the "
        f"models, at most ~{cost.step_seconds:,.0f} s of arithmetic per RL step at full length"
    )
