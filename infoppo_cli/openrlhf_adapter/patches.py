"""Every piece of upstream code (OpenRLHF, and torch and vLLM where a CPU run needs it) that infoppo
replaces, in one table: what is replaced, where (our modules), why, in which processes, and the contract
touchpoint that pins the upstream code the replacement relies on.

A row is one of :data:`KINDS`:

* ``module attribute``: a name in an upstream module, rebound (``module.name = ours``); upstream code
  that reads the name at call time gets ours.
* ``class attribute``: an upstream class changed in place (``owner.*``: attributes set by name).
* ``stand-in module``: a module registered in ``sys.modules`` under an upstream name.
* ``private override``: a private upstream method (``_name``) overridden in a subclass of ours.
* ``replaced method``: a public upstream method whose body a subclass of ours replaces (no ``super()``).
* ``instance attribute``: a method or attribute of one upstream object, wrapped or replaced on that
  instance (``Class.name``).

``tests/openrlhf_adapter/test_upstream_contract.py`` runs every row's pin against OpenRLHF 0.11.2, and
``tests/openrlhf_adapter/test_patches.py`` reads the package's sources and fails on a rebinding, an
override or an instance wrapping that no row lists for the module that makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

MODULE_ATTRIBUTE = "module attribute"
CLASS_ATTRIBUTE = "class attribute"
STAND_IN_MODULE = "stand-in module"
PRIVATE_OVERRIDE = "private override"
REPLACED_METHOD = "replaced method"
INSTANCE_ATTRIBUTE = "instance attribute"
KINDS = (
    MODULE_ATTRIBUTE,
    CLASS_ATTRIBUTE,
    STAND_IN_MODULE,
    PRIVATE_OVERRIDE,
    REPLACED_METHOD,
    INSTANCE_ATTRIBUTE,
)

_ACTOR = "openrlhf.trainer.ray.ppo_actor"
_CRITIC = "openrlhf.trainer.ray.ppo_critic"
_GENERATOR = "openrlhf.trainer.ppo_utils.samples_generator.SamplesGenerator"
_ENGINES = "openrlhf.trainer.ray.vllm_engine"


@dataclass(frozen=True)
class Patch:
    """One replacement: ``what`` (fully qualified upstream names), ``where`` (our modules that make it,
    relative to ``infoppo_cli/``), why, the contract touchpoint that pins it, and the processes it
    runs in."""

    kind: str
    what: tuple[str, ...]
    where: tuple[str, ...]
    why: str
    pinned_by: str
    processes: str


PATCHES: tuple[Patch, ...] = (
    # ------------------------------------------------------------------ the entry point (driver)
    Patch(
        MODULE_ATTRIBUTE,
        (f"{_ACTOR}.PolicyModelActor",),
        ("openrlhf_adapter/launch.py", "openrlhf_adapter/cpu/workers.py"),
        "train_ppo_ray builds the actor group from this name: infoppo's actor worker (old-policy entropy, "
        "policy loss, optimizer-step count); on a CPU run, that worker on a CPU",
        "train_ppo_ray_reads_the_rebound_names",
        "driver",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        (f"{_CRITIC}.CriticModelActor",),
        ("openrlhf_adapter/launch.py", "openrlhf_adapter/cpu/workers.py"),
        "train_ppo_ray builds the critic group from this name: upstream's critic worker with its "
        "rendezvous port reserved; on a CPU run, that worker with DeepSpeed on its CPU accelerator",
        "train_ppo_ray_reads_the_rebound_names",
        "driver",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.trainer.ppo_trainer.PPOTrainer",),
        ("openrlhf_adapter/launch.py", "openrlhf_adapter/cpu/workers.py"),
        "train() imports the controller at call time: infoppo's trainer (experience maker, run length, "
        "full batches, metrics.jsonl); on a CPU run, that trainer checking the engines' weights before "
        "each eval of a trained step",
        "train_imports_the_trainer_at_call_time",
        "driver",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.utils.config.hierarchize",),
        ("openrlhf_adapter/launch.py",),
        "attaches infoppo's settings (args.infotime) to the argument tree every process receives, and "
        "refuses the async mode (its nested actor is not infoppo's)",
        "the_cli_hierarchizes_through_the_module_attribute",
        "driver",
    ),
    # ------------------------------------------------------------------ the trainer (controller)
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.trainer.ppo_utils.samples_generator.tqdm",),
        ("openrlhf_adapter/progress.py",),
        "the sample generator's bars count the current phase's prompts for `infoppo train`'s progress",
        "the_progress_bars_are_the_module_global_tqdm",
        "trainer",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.trainer.ppo_trainer.tqdm",),
        ("openrlhf_adapter/progress.py",),
        "the episode bar (a pass over the prompts, not the run's RL steps) is silenced",
        "the_progress_bars_are_the_module_global_tqdm",
        "trainer",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        ("openrlhf.trainer.ppo_trainer.PPOTrainer.experience_maker",),
        ("openrlhf_adapter/actors.py",),
        "infoppo's experience maker (old-policy entropy, rho, information-time GAE), built from the parts "
        "of the one upstream's __init__ made",
        "the_experience_maker_is_built_in_the_trainer",
        "trainer",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        (
            f"{_GENERATOR}.generate_samples",
            f"{_GENERATOR}._generate_vllm",
            f"{_GENERATOR}._process_response_into_experience",
        ),
        ("openrlhf_adapter/step_metrics.py", "openrlhf_adapter/actors.py"),
        "RolloutRecorder sees every graded response of a training generation before dynamic filtering, "
        "and the prompts it consumed and groups it kept (reward_mean, grade_timeout_frac, kept_group_frac)",
        "the_recorder_sees_every_response_before_filtering",
        "trainer",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        (f"{_GENERATOR}.generate_samples",),
        ("openrlhf_adapter/full_batches.py", "openrlhf_adapter/actors.py"),
        "every RL step trains a full rollout batch drawn by the current policy, as verl does: a short "
        "batch at the end of a pass is held and completed by the next pass, the draw's surplus dropped "
        "(discarded_stale_groups) unless the method keeps it (keep_stale_surplus)",
        "a_short_batch_ends_the_pass",
        "trainer",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        (f"{_GENERATOR}.generate_samples",),
        ("openrlhf_adapter/actors.py",),
        "the run's length: once the planned RL steps are made, a draw returns no samples and an exhausted "
        "dataloader, which ends upstream's loop; each draw also starts the progress's generate phase",
        "a_spent_step_budget_ends_the_remaining_episodes",
        "trainer",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        ("openrlhf.trainer.ppo_trainer.BasePPOTrainer.args.ckpt.save_steps",),
        ("openrlhf_adapter/actors.py",),
        "the last RL step is checkpointed also off the save_steps grid: upstream saves only when "
        "global_step % save_steps == 0, so save_steps is that step for one call, then restored",
        "checkpoints_are_saved_every_save_steps",
        "trainer",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        (
            "openrlhf.trainer.ppo_trainer.BasePPOTrainer.wandb_logger.close",
            "openrlhf.trainer.ppo_trainer.BasePPOTrainer.tensorboard_logger.close",
        ),
        ("openrlhf_adapter/actors.py",),
        "upstream's fit() closes its trackers when its loop ends; their close waits until the run's last "
        "eval (off the eval grid) is logged, then runs",
        "fit_closes_only_its_trackers_after_the_loop",
        "trainer",
    ),
    Patch(
        PRIVATE_OVERRIDE,
        ("openrlhf.trainer.ppo_utils.experience_maker.RemoteExperienceMaker._flatten_results",),
        ("openrlhf_adapter/experience_maker.py",),
        "the actor workers answer (log_probs, entropy): the entropy is set aside as the old policy's, the "
        "log-probs go on as upstream's",
        "the_actor_forward_results_pass_through_flatten_results",
        "trainer",
    ),
    Patch(
        CLASS_ATTRIBUTE,
        ("openrlhf.trainer.ppo_utils.experience.Experience.*",),
        ("openrlhf_adapter/experience_fields.py",),
        "the dataclass gains the 'step' fields old_entropy and info_rho (its generated __init__, __repr__ "
        "and __eq__ rebuilt): OpenRLHF drops any attribute that is not a declared field",
        "experience_fields_are_declared_with_tensor_roles",
        "trainer, actor workers",
    ),
    # ------------------------------------------------------------------ the actor workers
    Patch(
        PRIVATE_OVERRIDE,
        ("openrlhf.trainer.ray.launcher.BaseDistributedActor._get_free_port",),
        ("openrlhf_adapter/actors.py",),
        "a worker group's rendezvous port is drawn outside the ephemeral range and Ray's worker ports "
        "and held until the worker exits (ports.py): upstream's bind(0) port can be taken by another "
        "process on the machine before DeepSpeed binds it, failing the run with EADDRINUSE",
        "the_master_port_comes_from_get_free_port",
        "actor and critic workers",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.models.actor.compute_entropy",),
        ("openrlhf_adapter/old_policy.py",),
        "a chunked entropy (no full-vocabulary temporaries over long responses)",
        "the_actor_computes_entropy_through_the_module_global",
        "actor workers",
    ),
    Patch(
        REPLACED_METHOD,
        (f"{_ACTOR}.PolicyModelActor.forward",),
        ("openrlhf_adapter/actors.py",),
        "returns (log_probs, entropy) from one forward pass, where upstream returns the log-probs alone",
        "the_actor_forward_copy_matches_upstream",
        "actor workers",
    ),
    Patch(
        INSTANCE_ATTRIBUTE,
        (f"{_ACTOR}.ActorPPOTrainer.training_step", f"{_ACTOR}.ActorPPOTrainer.actor_loss_fn"),
        ("openrlhf_adapter/policy_loss.py",),
        "infoppo's policy loss (upstream's PolicyLoss inside) is handed each micro-batch's experience "
        "(rho, token masks) and the training forward's entropy (a forward hook on the actor)",
        "training_step_calls_the_loss_and_returns_entropy",
        "actor workers",
    ),
    # ------------------------------------------------------------------ a CPU run (--device cpu)
    Patch(
        STAND_IN_MODULE,
        ("flash_attn_2_cuda", "flash_attn.ops.triton.cross_entropy"),
        ("openrlhf_adapter/cpu/stand_ins.py",),
        "flash-attn's Python part imports its CUDA extension, which needs nvcc to build, and OpenRLHF's "
        "ring attention imports flash-attn at module level: an empty extension; flash-attn's Triton "
        "cross-entropy (CUDA only; Triton comes with vLLM's CPU build) is blocked, so that OpenRLHF's "
        "log-probs take their torch fallback",
        "ring_attention_imports_flash_attn_when_loaded",
        "every process of a CPU run and the tests, where the extension is missing",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        (f"{_ENGINES}.placement_group", f"{_ENGINES}.RolloutRayActor"),
        ("openrlhf_adapter/cpu/rollout.py",),
        "CPU run: upstream's create_vllm_engines places its engines on CPU bundles (it asks for a GPU "
        "per bundle and per engine) and builds upstream's engine, whose __init__ first sets vLLM's CPU "
        "backend up (KV cache, threads) and names the worker extension that receives weights on the CPU",
        "the_engines_are_placed_through_two_module_names",
        "driver, CPU runs",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        (f"{_ACTOR}.stateless_init_process_group",),
        ("openrlhf_adapter/cpu/workers.py",),
        "CPU run: the actor opens the weight-sync group to the engines over gloo (upstream opens an NCCL "
        "communicator), apart from DeepSpeed's default group",
        "the_weight_sync_group_is_opened_by_name",
        "CPU actor workers",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.utils.distributed_util.stateless_init_process_group",),
        ("openrlhf_adapter/cpu/weight_sync.py",),
        "CPU run: the engine's vLLM worker joins the weight-sync group over gloo, apart from vLLM's own "
        "default group",
        "the_weight_sync_group_is_opened_by_name",
        "CPU rollout engines' vLLM workers",
    ),
    Patch(
        REPLACED_METHOD,
        ("openrlhf.trainer.ray.vllm_worker_wrap.WorkerWrap.update_weight",),
        ("openrlhf_adapter/cpu/weight_sync.py",),
        "CPU run: the engine receives each broadcast parameter into a buffer on its own device "
        "(upstream allocates it on cuda), then loads it with vLLM's load_weights as upstream does",
        "the_weight_sync_group_is_opened_by_name",
        "CPU rollout engines' vLLM workers",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.trainer.ray.launcher.RayActorGroup",),
        ("openrlhf_adapter/cpu/workers.py",),
        "CPU run: workers placed on CPU bundles (upstream asks Ray for GPU bundles)",
        "the_actor_group_places_workers_by_gpu_bundles",
        "driver, CPU runs",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        (f"{_ACTOR}.NaiveReplayBuffer", f"{_CRITIC}.NaiveReplayBuffer"),
        ("openrlhf_adapter/cpu/torch_device.py",),
        "CPU run: the replay buffer names its device cuda:{index}; kept on the CPU",
        "the_replay_buffers_are_built_from_the_module_name",
        "CPU workers",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        (
            "torch.cuda.current_device",
            "torch.cuda.synchronize",
            "torch.cuda.empty_cache",
            "torch.cuda.set_device",
            "torch.cuda.current_stream",
        ),
        ("openrlhf_adapter/cpu/torch_device.py",),
        "CPU run: OpenRLHF calls these torch.cuda functions itself in its workers, strategy, replay "
        "buffer and weight sync; current_device answers the CPU, the others do nothing",
        "the_cpu_workers_call_five_torch_cuda_functions",
        "CPU workers",
    ),
    Patch(
        MODULE_ATTRIBUTE,
        ("openrlhf.utils.deepspeed.deepspeed.init_device_mesh",),
        ("openrlhf_adapter/cpu/strategy.py",),
        "CPU run: DeepspeedStrategy builds its device mesh on CUDA; the same mesh on the CPU (gloo)",
        "the_strategy_builds_one_cuda_device_mesh",
        "CPU workers",
    ),
)


def lists(target: str, module: str, kind: str | None = None) -> bool:
    """Whether a row (of ``kind``, any kind for ``None``) says that ``module`` (relative to
    ``infoppo_cli/``) replaces ``target``; ``owner.*`` rows cover every attribute of ``owner``, and an
    instance row covers the method or attribute it names on any object (``target`` is then ``.name``)."""
    owner = target.rpartition(".")[0]
    for patch in PATCHES:
        if module not in patch.where or (kind is not None and patch.kind != kind):
            continue
        if target in patch.what or f"{owner}.*" in patch.what:
            return True
        if target.startswith(".") and any(name.endswith(target) for name in patch.what):
            return True
    return False
