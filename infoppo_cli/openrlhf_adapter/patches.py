"""Every name of OpenRLHF (and of torch) that infoppo rebinds, in one table: what, where, why, and the
contract test that pins the upstream code the replacement relies on.

``tests/openrlhf_adapter/test_upstream_contract.py`` checks each row's pin against OpenRLHF 0.11.2,
and fails on an assignment to an upstream module's attribute anywhere in the package that this table
does not list. Methods wrapped on one instance (``trainer.training_step``, a sample generator's
``generate_samples``) are not rebindings of a shared name and live with their wrappers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Patch:
    """One rebound name: ``target`` (``module.attribute``), the module of ours that rebinds it, in
    which processes, why, and the contract touchpoint (a function of the contract test) that pins it."""

    target: str
    where: str
    why: str
    pinned_by: str
    processes: str = "every run"


PATCHES: tuple[Patch, ...] = (
    Patch(
        "openrlhf.trainer.ray.ppo_actor.PolicyModelActor",
        "openrlhf_adapter/launch.py (GPU), cpu/workers.py (CPU)",
        "train_ppo_ray builds the actor group from this name: infoppo's actor worker (old-policy entropy, "
        "policy loss, optimizer-step count)",
        "train_ppo_ray_reads_the_rebound_names",
        "driver",
    ),
    Patch(
        "openrlhf.trainer.ppo_trainer.PPOTrainer",
        "openrlhf_adapter/launch.py",
        "train() imports the controller at call time: infoppo's trainer (experience maker, run length, "
        "full batches, metrics.jsonl)",
        "train_imports_the_trainer_at_call_time",
        "driver",
    ),
    Patch(
        "openrlhf.utils.config.hierarchize",
        "openrlhf_adapter/launch.py",
        "attaches infoppo's settings (args.infotime) to the argument tree every process receives",
        "the_cli_hierarchizes_through_the_module_attribute",
        "driver",
    ),
    Patch(
        "openrlhf.trainer.ppo_utils.samples_generator.tqdm",
        "openrlhf_adapter/progress.py",
        "the sample generator's bars count the current phase's prompts for `infoppo train`'s progress",
        "the_progress_bars_are_the_module_global_tqdm",
        "trainer",
    ),
    Patch(
        "openrlhf.trainer.ppo_trainer.tqdm",
        "openrlhf_adapter/progress.py",
        "the episode bar (a pass over the prompts, not the run's RL steps) is silenced",
        "the_progress_bars_are_the_module_global_tqdm",
        "trainer",
    ),
    Patch(
        "openrlhf.models.actor.compute_entropy",
        "openrlhf_adapter/old_policy.py",
        "a chunked entropy (no full-vocabulary temporaries over long responses)",
        "the_actor_computes_entropy_through_the_module_global",
        "actor workers",
    ),
    Patch(
        "openrlhf.trainer.ray.create_vllm_engines",
        "openrlhf_adapter/cpu/workers.py",
        "CPU run: transformers rollout engines where vLLM cannot be installed",
        "train_ppo_ray_reads_the_rebound_names",
        "driver, CPU runs",
    ),
    Patch(
        "openrlhf.trainer.ray.launcher.RayActorGroup",
        "openrlhf_adapter/cpu/workers.py",
        "CPU run: workers placed on CPU bundles (upstream asks Ray for GPU bundles)",
        "the_actor_group_places_workers_by_gpu_bundles",
        "driver, CPU runs",
    ),
    Patch(
        "openrlhf.trainer.ray.ppo_critic.CriticModelActor",
        "openrlhf_adapter/cpu/workers.py",
        "CPU run: the critic worker with DeepSpeed on its CPU accelerator",
        "train_ppo_ray_reads_the_rebound_names",
        "driver, CPU runs",
    ),
    Patch(
        "openrlhf.trainer.ray.ppo_actor.NaiveReplayBuffer",
        "openrlhf_adapter/cpu/torch_device.py",
        "CPU run: the replay buffer formats its device as cuda:{index}; kept on the CPU",
        "the_replay_buffers_are_built_from_the_module_name",
        "CPU workers",
    ),
    Patch(
        "openrlhf.trainer.ray.ppo_critic.NaiveReplayBuffer",
        "openrlhf_adapter/cpu/torch_device.py",
        "as the actor's",
        "the_replay_buffers_are_built_from_the_module_name",
        "CPU workers",
    ),
    Patch(
        "openrlhf.utils.deepspeed.deepspeed.init_device_mesh",
        "openrlhf_adapter/cpu/strategy.py",
        "CPU run: DeepspeedStrategy builds its device mesh on CUDA; the same mesh on the CPU (gloo)",
        "the_strategy_builds_one_cuda_device_mesh",
        "CPU workers",
    ),
    Patch(
        "torch.cuda.current_device, synchronize, empty_cache, set_device",
        "openrlhf_adapter/cpu/torch_device.py",
        "CPU run: OpenRLHF calls torch.cuda directly in its workers and strategy; pointed at the CPU",
        "the_replay_buffers_are_built_from_the_module_name",
        "CPU workers",
    ),
)


def rebound_targets() -> set[str]:
    """``module.attribute`` of every rebinding in :data:`PATCHES` (torch's row expanded)."""
    found = set()
    for patch in PATCHES:
        module, _, names = patch.target.partition(", ")
        head, _, first = module.rpartition(".")
        found.add(module)
        found.update(f"{head}.{name}" for name in names.split(", ") if name)
    return found
