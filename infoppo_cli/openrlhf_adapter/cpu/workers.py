"""The actor and critic workers of a CPU run, their group's placement, and the weight sync.

The workers are infoppo's GPU workers (``actors.InfoPolicyModelActor``, OpenRLHF's
``CriticModelActor``) training with OpenRLHF's ``DeepspeedStrategy`` and DeepSpeed's engine on its CPU
accelerator (``strategy``), with OpenRLHF's direct ``torch.cuda`` calls pointed at the CPU
(``torch_device``) and, in the actor, the weight sync to the rollout engines carried by Ray's object
store, where upstream's ``ActorPPOTrainer`` opens an NCCL group to vLLM and broadcasts every
parameter over it. A group of several workers (``--gpus-per-node N`` on a CPU run) is data parallel:
DeepSpeed all-reduces their gradients over gloo.
"""

from __future__ import annotations

from typing import Any

import ray
from openrlhf.trainer.ray.launcher import RayActorGroup
from openrlhf.trainer.ray.ppo_critic import CriticModelActor

from infoppo_cli.openrlhf_adapter.actors import InfoPolicyModelActor
from infoppo_cli.openrlhf_adapter.cpu.rollout import parameter_digest
from infoppo_cli.openrlhf_adapter.cpu.strategy import run_deepspeed_on_cpu
from infoppo_cli.openrlhf_adapter.cpu.torch_device import cpu_threads, run_cuda_calls_on_cpu


def _prepare_cpu_worker(world_size: Any) -> None:
    """In a model worker, before upstream's ``__init__``: the import stand-ins (also installed by Ray's
    setup hook; idempotent), DeepSpeed on its CPU accelerator, and OpenRLHF's ``torch.cuda`` calls on
    the CPU, with half the engine's threads shared among the group's workers (actor and critic work
    side by side in a synchronous step)."""
    from infoppo_cli.openrlhf_adapter.cpu.stand_ins import install

    install()
    run_deepspeed_on_cpu()
    run_cuda_calls_on_cpu(max(cpu_threads() // 2 // max(int(world_size), 1), 1))


@ray.remote(num_gpus=0)
class CpuPolicyModelActor(InfoPolicyModelActor.__ray_actor_class__):
    """infoppo's actor worker on a CPU."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _prepare_cpu_worker(args[0] if args else kwargs["world_size"])
        super().__init__(*args, **kwargs)
        self.rollout_engines: list = []

    def init_model_from_pretrained(self, strategy, pretrain, max_steps=None, vllm_engines=None):
        """Upstream's set-up without the engines, so that its trainer opens no NCCL group to them;
        :meth:`broadcast_to_vllm` reaches them through the object store instead."""
        self.rollout_engines = list(vllm_engines or [])
        return super().init_model_from_pretrained(strategy, pretrain, max_steps, None)

    def broadcast_to_vllm(self) -> None:
        """Send every trained parameter to the rollout engines: one object-store copy, loaded by each,
        from the first worker (ZeRO stage 2 keeps whole parameters on every data-parallel worker)."""
        if not self.strategy.is_rank_0():
            return
        model = self.actor.model.module
        state = {name: param.detach().float().cpu().clone() for name, param in model.named_parameters()}
        reference = ray.put(state)
        ray.get([engine.update_weights.remote(reference) for engine in self.rollout_engines])

    def weights_digest(self) -> dict[str, str]:
        """A hash of every trained parameter (tests compare it with the rollout engine's)."""
        return parameter_digest(self.actor.model.module)


@ray.remote(num_gpus=0)
class CpuCriticModelActor(CriticModelActor.__ray_actor_class__):
    """OpenRLHF's critic worker on a CPU."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _prepare_cpu_worker(args[0] if args else kwargs["world_size"])
        super().__init__(*args, **kwargs)


class _OnCpus:
    """An actor class whose ``options`` ask Ray for no GPU (``RayActorGroup`` asks for one)."""

    def __init__(self, actor_class: Any) -> None:
        self.actor_class = actor_class

    def options(self, **options: Any) -> Any:
        options.update(num_gpus=0, num_cpus=0)
        return self.actor_class.options(**options)


WORKER_CPU_SHARE = 0.01
"""The CPU a worker's placement bundle reserves: a token amount, so that a bundle always fits (the
workers' threads, not Ray's accounting, divide the cores; the plan refuses more workers per model
than cores)."""


def cpu_placement_group(workers: int):
    """A placement group of one CPU bundle per worker on this node (upstream builds GPU bundles for
    a group of more than one worker, which a machine without GPUs never satisfies)."""
    from ray.util.placement_group import placement_group

    group = placement_group([{"CPU": WORKER_CPU_SHARE}] * workers, strategy="PACK")
    ray.get(group.ready())
    return group


class CpuActorGroup(RayActorGroup):
    """OpenRLHF's ``RayActorGroup`` (one worker per "GPU" slot of the plan) placed on CPUs: several
    workers per model form one data-parallel DeepSpeed group."""

    def __init__(self, num_nodes, num_gpus_per_node, ray_actor_type, pg=None, num_gpus_per_actor=1, **kwargs):
        if pg is not None:
            raise ValueError("a CPU run has no GPU placement group (train.colocate_* off)")
        workers = num_nodes * num_gpus_per_node
        group = cpu_placement_group(workers) if workers > 1 else None
        super().__init__(num_nodes, num_gpus_per_node, _OnCpus(ray_actor_type), group, 0, **kwargs)
        self.ray_actor_type = ray_actor_type


def install_cpu_classes() -> None:
    """Make OpenRLHF's ``train()`` (this process) build CPU engines, workers and groups (its strategy
    is upstream's ``DeepspeedStrategy``)."""
    import openrlhf.trainer.ray as ray_package
    import openrlhf.trainer.ray.launcher as launcher
    import openrlhf.trainer.ray.ppo_actor as ppo_actor
    import openrlhf.trainer.ray.ppo_critic as ppo_critic

    from infoppo_cli.openrlhf_adapter.cpu.rollout import create_cpu_engines

    ray_package.create_vllm_engines = create_cpu_engines
    launcher.RayActorGroup = CpuActorGroup
    ppo_actor.PolicyModelActor = CpuPolicyModelActor
    ppo_critic.CriticModelActor = CpuCriticModelActor
