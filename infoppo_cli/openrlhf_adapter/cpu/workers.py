"""The actor and critic workers of a CPU run, their group's placement, and the weight sync.

What is replaced, and why (each a row of ``openrlhf_adapter.patches.PATCHES``):

* the workers: infoppo's actor and critic workers (``actors.InfoPolicyModelActor``, and OpenRLHF's
  ``CriticModelActor`` as ``actors.InfoCriticModelActor``), each process set up for the CPU before
  upstream's ``__init__`` (:func:`run_worker_on_cpu`): DeepSpeed on its CPU accelerator with the
  strategy's device mesh on the CPU (``strategy``), OpenRLHF's own ``torch.cuda`` calls answered on the
  CPU (``torch_device``);
* the weight sync: upstream's actor opens a group to the vLLM engines and broadcasts every parameter
  over it; in :class:`CpuPolicyModelActor` that group is gloo's (``weight_sync``), and after each sync
  every engine's weights are checked against the actor's (:func:`check_engines_hold`), and again
  before every eval of a trained step (:class:`CpuInfoPPOTrainer`), so that no eval reports on weights
  other than that step's;
* the placement: upstream's ``RayActorGroup`` asks Ray for one GPU bundle per worker of a group of
  several, which a machine without GPUs never grants; :class:`CpuActorGroup` hands it a group of CPU
  bundles. Several workers per model (``--gpus-per-node N`` on a CPU run) are data parallel: DeepSpeed
  all-reduces their gradients over gloo.

:func:`install_cpu_classes` makes OpenRLHF's ``train()`` (the driver) build these, and the CPU rollout
engines of ``rollout`` (upstream's, on CPU bundles).
"""

from __future__ import annotations

from typing import Any

import openrlhf.trainer.ppo_trainer as ppo_trainer
import openrlhf.trainer.ray.launcher as launcher
import openrlhf.trainer.ray.ppo_actor as ppo_actor
import openrlhf.trainer.ray.ppo_critic as ppo_critic
import ray
import torch
from openrlhf.trainer.ray.launcher import RayActorGroup
from ray.util.placement_group import placement_group

from infoppo_cli.openrlhf_adapter.actors import InfoCriticModelActor, InfoPolicyModelActor, InfoPPOTrainer
from infoppo_cli.openrlhf_adapter.cpu.rollout import place_engines_on_cpus
from infoppo_cli.openrlhf_adapter.cpu.stand_ins import install as install_stand_ins
from infoppo_cli.openrlhf_adapter.cpu.strategy import run_deepspeed_on_cpu
from infoppo_cli.openrlhf_adapter.cpu.torch_device import cpu_threads, run_cuda_calls_on_cpu
from infoppo_cli.openrlhf_adapter.cpu.weight_sync import gloo_sync_group, parameter_checksum


def worker_threads(world_size: int) -> int:
    """Torch threads for one model worker: half the rollout engine's, shared among the group's workers
    (the actor and the critic work side by side in a synchronous step)."""
    return max(cpu_threads() // 2 // max(world_size, 1), 1)


def run_worker_on_cpu(world_size: int) -> None:
    """Set up this model worker's process for the CPU, before upstream's ``__init__``: the import
    stand-ins (Ray's setup hook installed them already; idempotent), DeepSpeed on its CPU accelerator,
    OpenRLHF's ``torch.cuda`` calls on the CPU, and its share of the cores."""
    install_stand_ins()
    run_deepspeed_on_cpu()
    run_cuda_calls_on_cpu()
    torch.set_num_threads(worker_threads(world_size))


def _world_size(args: tuple, kwargs: dict[str, Any]) -> int:
    """The ``world_size`` a model worker is built with (upstream's first parameter)."""
    return int(args[0] if args else kwargs["world_size"])


class WeightSyncError(RuntimeError):
    """An engine does not hold the weights the actor just sent it."""


@ray.remote(num_gpus=0)
class CpuPolicyModelActor(InfoPolicyModelActor.__ray_actor_class__):
    """infoppo's actor worker on a CPU; after upstream's weight sync, each engine's weights are
    checked against the actor's, so that no rollout is drawn from stale weights."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        run_worker_on_cpu(_world_size(args, kwargs))
        ppo_actor.stateless_init_process_group = gloo_sync_group  # the weight-sync group, over gloo
        super().__init__(*args, **kwargs)

    def broadcast_to_vllm(self) -> None:
        super().broadcast_to_vllm()
        self.check_engines("after the weight sync")

    def check_engines(self, when: str) -> None:
        """Raise :class:`WeightSyncError` unless every engine holds this actor's weights (rank 0 asks)."""
        if self.strategy.is_rank_0():
            check_engines_hold(parameter_checksum(self.actor.model.module), self.trainer.vllm_engines, when)

    def parameter_checksum(self) -> tuple[float, float]:
        """The trained weights as ``weight_sync.parameter_checksum`` sums them."""
        return parameter_checksum(self.actor.model.module)


CHECKSUM_TOLERANCE = 1e-9
"""Relative difference allowed between two float64 sums of the same values added in another order."""


def check_engines_hold(expected: tuple[float, float], engines: list, when: str) -> None:
    """Raise :class:`WeightSyncError` unless every engine loaded weights that sum as ``expected``
    (``when``: the moment, for the message)."""
    for index, held in enumerate(ray.get([engine.loaded_checksum.remote() for engine in engines])):
        for mine, theirs in zip(expected, held or (None, None), strict=True):
            if theirs is None or abs(mine - theirs) > CHECKSUM_TOLERANCE * max(abs(mine), 1.0):
                raise WeightSyncError(
                    f"rollout engine {index} does not hold the trained weights {when} "
                    f"(checksum {theirs!r}, the actor's {mine!r}); stopping rather than generating "
                    "from stale weights"
                )


@ray.remote
class CpuInfoPPOTrainer(InfoPPOTrainer.__ray_actor_class__):
    """infoppo's trainer on a CPU: the eval of a trained step first checks that every engine holds the
    actor's weights (the base model's eval, step 0, generates from the engines' own load of it)."""

    def evaluate(self, global_step, **generate_kwargs):
        if global_step > 0:
            when = f"before the eval of step {global_step}"
            ray.get(self.actor_model_group.async_run_method(method_name="check_engines", when=when))
        return super().evaluate(global_step, **generate_kwargs)


@ray.remote(num_gpus=0)
class CpuCriticModelActor(InfoCriticModelActor.__ray_actor_class__):
    """OpenRLHF's critic worker on a CPU."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        run_worker_on_cpu(_world_size(args, kwargs))
        super().__init__(*args, **kwargs)


WORKER_CPU_SHARE = 0.01
"""The CPU a worker's placement bundle reserves: a token amount, so that a bundle always fits (the
workers' threads, not Ray's accounting, divide the cores; the plan refuses more workers per model
than cores)."""


def cpu_placement_group(workers: int):
    """A placement group of one CPU bundle per worker on this node (upstream builds GPU bundles for
    a group of more than one worker, which a machine without GPUs never satisfies)."""
    group = placement_group([{"CPU": WORKER_CPU_SHARE}] * workers, strategy="PACK")
    ray.get(group.ready())
    return group


class CpuActorGroup(RayActorGroup):
    """OpenRLHF's ``RayActorGroup`` (one worker per "GPU" slot of the plan) placed on CPUs: its workers
    ask Ray for no GPU and no whole CPU (upstream asks for ``num_gpus_per_actor`` of each, here 0), and
    a group of several is placed in a CPU placement group, where upstream would build GPU bundles."""

    def __init__(self, num_nodes, num_gpus_per_node, ray_actor_type, pg=None, num_gpus_per_actor=1, **kwargs):
        if pg is not None:
            raise ValueError("a CPU run has no GPU placement group (train.colocate_* off)")
        workers = num_nodes * num_gpus_per_node
        group = cpu_placement_group(workers) if workers > 1 else None
        super().__init__(num_nodes, num_gpus_per_node, ray_actor_type, group, 0, **kwargs)


def install_cpu_classes() -> None:
    """Make OpenRLHF's ``train()`` (this process) build CPU engines, workers and groups (its strategy
    is upstream's ``DeepspeedStrategy``)."""
    place_engines_on_cpus()
    launcher.RayActorGroup = CpuActorGroup
    ppo_actor.PolicyModelActor = CpuPolicyModelActor
    ppo_trainer.PPOTrainer = CpuInfoPPOTrainer
    ppo_critic.CriticModelActor = CpuCriticModelActor
