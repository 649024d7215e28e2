"""Every point where infoppo touches OpenRLHF 0.11.2's internals, asserted one by one.

The adapter extends OpenRLHF without copying it: it rebinds names that OpenRLHF reads at call time,
subclasses its classes, wraps instance methods and reads its source. Each row below states one such
assumption as OpenRLHF's own code shows it, so that an upgrade of OpenRLHF fails here, in one file,
with the list of what moved (``pytest tests/openrlhf_adapter/test_upstream_contract.py -q``). Every
row of the patch table (``openrlhf_adapter/patches.py``, checked against the package's sources by
``test_patches.py``) names the touchpoint here that pins it.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from collections.abc import Callable

import pytest


def _source(obj) -> str:
    return textwrap.dedent(inspect.getsource(obj))


def _tree(obj) -> ast.AST:
    return ast.parse(_source(obj))


def _calls(obj) -> set[str]:
    """Names called in ``obj``'s source: ``f(`` as ``f``, ``self.x.y(`` as ``self.x.y``."""
    found = set()
    for node in ast.walk(_tree(obj)):
        if isinstance(node, ast.Call):
            found.add(ast.unparse(node.func))
    return found


def _module_imports(module) -> dict[str, str]:
    """``name -> module`` of the module-level ``from M import name`` statements of ``module``."""
    tree = ast.parse(inspect.getsource(module))
    return {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def _params(function) -> list[str]:
    """Parameter names (without the one Ray's tracing adds to actor methods)."""
    return [name for name in inspect.signature(function).parameters if name != "_ray_trace_ctx"]


# --------------------------------------------------------------------------- launch (rebinding)


def train_ppo_ray_reads_the_rebound_names():
    """``launch`` rebinds these module attributes before running ``train_ppo_ray`` with runpy, whose
    top-level ``from ... import`` statements then pick them up."""
    import openrlhf.cli.train_ppo_ray as cli

    expected = {
        "PolicyModelActor": "openrlhf.trainer.ray.ppo_actor",
        "CriticModelActor": "openrlhf.trainer.ray.ppo_critic",
        "RayActorGroup": "openrlhf.trainer.ray.launcher",
        "create_vllm_engines": "openrlhf.trainer.ray",
        "get_strategy": "openrlhf.utils",
    }
    imports = _module_imports(cli)
    assert {name: imports.get(name) for name in expected} == expected


def the_master_port_comes_from_get_free_port():
    """A worker group's rank 0 asks ``self._get_free_port()`` for its rendezvous port when it is given
    none (the actors' override reserves it), a static method of ``BaseDistributedActor`` that both
    model workers inherit."""
    from openrlhf.trainer.ray.launcher import BaseDistributedActor
    from openrlhf.trainer.ray.ppo_actor import PolicyModelActor
    from openrlhf.trainer.ray.ppo_critic import CriticModelActor

    assert isinstance(inspect.getattr_static(BaseDistributedActor, "_get_free_port"), staticmethod)
    assert "self._get_free_port" in _source(BaseDistributedActor.__init__)
    for worker in (PolicyModelActor, CriticModelActor):  # the module names may be ours by now (launch)
        upstream = [k for k in worker.__ray_actor_class__.__mro__ if k.__module__.startswith("openrlhf.")]
        assert next(k for k in upstream if "_get_free_port" in vars(k)) is BaseDistributedActor


def train_imports_the_trainer_at_call_time():
    """``PPOTrainer`` is imported inside ``train()``, after ``launch`` rebound it."""
    import openrlhf.cli.train_ppo_ray as cli

    inner = [n for n in ast.walk(_tree(cli.train)) if isinstance(n, ast.ImportFrom)]
    assert any(n.module == "openrlhf.trainer.ppo_trainer" and n.names[0].name == "PPOTrainer" for n in inner)


def the_cli_hierarchizes_through_the_module_attribute():
    """``launch`` wraps ``openrlhf.utils.config.hierarchize``; the ``__main__`` block imports it there."""
    import openrlhf.cli.train_ppo_ray as cli

    tree = ast.parse(inspect.getsource(cli))
    main = next(n for n in tree.body if isinstance(n, ast.If) and "__name__" in ast.unparse(n.test))
    names = [(n.module, a.name) for n in ast.walk(main) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert ("openrlhf.utils.config", "hierarchize") in names and "train(args)" in ast.unparse(main)


def the_main_block_parses_before_it_hierarchizes():
    """``flags.openrlhf_parser`` executes the ``__main__`` block's statements up to ``parse_args``."""
    from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser

    parser = openrlhf_parser()
    known = {action.dest for action in parser._actions}
    assert {"actor.model_name_or_path", "train.num_episodes", "ckpt.best_metric_key"} <= known


def train_passes_get_max_steps_to_the_workers():
    """infoppo's trainer reports the planned run's optimizer steps through ``get_max_steps``."""
    import openrlhf.cli.train_ppo_ray as cli

    assert "ppo_trainer.get_max_steps.remote" in _calls(cli.train)


# --------------------------------------------------------------------------- trainer (controller)


def fit_draws_samples_through_generate_samples():
    """The step budget and the rollout recorder wrap ``samples_generator.generate_samples``."""
    from openrlhf.trainer.ppo_trainer import PPOTrainer

    fit = PPOTrainer.__ray_actor_class__.fit
    assert "self.samples_generator.generate_samples" in _calls(fit)
    assert "self.train_step" in _calls(fit) and "self.save_logs_and_checkpoints" in _calls(fit)


def the_progress_bars_are_the_module_global_tqdm():
    """``progress.fold_upstream_bars`` rebinds ``tqdm`` in the two modules whose bars the trainer draws:
    the sample generator's (``update`` and ``set_postfix`` only) and the episode bar of ``fit``."""
    import openrlhf.trainer.ppo_trainer as trainer_module
    import openrlhf.trainer.ppo_utils.samples_generator as generator_module

    for module in (trainer_module, generator_module):
        assert _module_imports(module)["tqdm"] == "tqdm"
    generate = _calls(generator_module.SamplesGenerator._generate_vllm)
    assert "tqdm" in generate and {c for c in generate if c.startswith("pbar.")} <= {
        "pbar.update",
        "pbar.set_postfix",
    }
    fit = _calls(trainer_module.PPOTrainer.__ray_actor_class__.fit)
    assert "tqdm" in fit and {c for c in fit if c.startswith("pbar.")} <= {"pbar.update"}


def a_spent_step_budget_ends_the_remaining_episodes():
    """Once the planned RL steps are made, infoppo's ``generate_samples`` answers no samples and an
    exhausted dataloader: every remaining episode of ``fit`` then draws once, trains nothing and ends
    (``fit_closes_only_its_trackers_after_the_loop`` pins what follows the loop)."""
    from openrlhf.trainer.ppo_trainer import PPOTrainer

    body = _tree(PPOTrainer.__ray_actor_class__.fit).body[0].body
    episodes = next(node for node in body if isinstance(node, ast.For))
    *opening, loop = episodes.body  # the episode's bar, then its loop of draws
    assert isinstance(loop, ast.While) and all(isinstance(node, ast.Assign) for node in opening)
    assert _called(opening) <= {"len", "tqdm", "range", "max"}
    check = next(i for i, node in enumerate(loop.body) if ast.unparse(node).startswith("if not rollout_"))
    assert _called(loop.body[:check]) == {"time.time", "self.samples_generator.generate_samples"}
    assert " ".join(ast.unparse(loop.body[check]).split()) == (
        "if not rollout_samples: if is_exhausted: break continue"
    )


def _called(statements: list[ast.stmt]) -> set[str]:
    """The functions called in ``statements``."""
    return {
        ast.unparse(node.func)
        for statement in statements
        for node in ast.walk(statement)
        if isinstance(node, ast.Call)
    }


def fit_evaluates_every_eval_steps():
    """``InfoPPOTrainer._eval_due`` mirrors upstream's condition for an evaluation after a step."""
    from openrlhf.trainer.ppo_trainer import PPOTrainer

    text = _source(PPOTrainer.__ray_actor_class__.fit)
    assert "if global_step % self.args.eval.steps == 0 and self.eval_dataloader:" in text


def fit_closes_only_its_trackers_after_the_loop():
    """A run stopped at its step budget leaves upstream's loop; infoppo then does what follows it."""
    from openrlhf.trainer.ppo_trainer import PPOTrainer

    body = _tree(PPOTrainer.__ray_actor_class__.fit).body[0].body
    loop = next(i for i, node in enumerate(body) if isinstance(node, ast.For))
    after = "\n".join(ast.unparse(node) for node in body[loop + 1 :])
    assert after == (
        "if self.wandb_logger:\n    self.wandb_logger.close()\n"
        "if self.tensorboard_logger:\n    self.tensorboard_logger.close()"
    )


def checkpoints_are_saved_every_save_steps():
    """``InfoPPOTrainer.save_logs_and_checkpoints`` saves the last step through this very condition."""
    from openrlhf.trainer.ppo_trainer import BasePPOTrainer

    text = _source(BasePPOTrainer.save_logs_and_checkpoints)
    assert "if global_step % self.args.ckpt.save_steps == 0:" in text
    assert "if global_step % self.args.logger.logging_steps == 0:" in text


def the_best_checkpoint_follows_best_metric_key():
    """The plan sets ``ckpt.best_metric_key`` to the mean over benchmarks that infoppo logs."""
    from openrlhf.trainer.ppo_trainer import BasePPOTrainer

    text = _source(BasePPOTrainer._detect_eval_metric_key)
    assert "return self.best_eval_metric_key if self.best_eval_metric_key in eval_metrics else None" in text


def the_experience_maker_is_built_in_the_trainer():
    """``InfoPPOTrainer`` replaces ``self.experience_maker`` with one built from the same parts."""
    from openrlhf.trainer.ppo_trainer import BasePPOTrainer
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker

    assert "RemoteExperienceMaker" in _calls(BasePPOTrainer.__init__)
    parts = ["actor_model_group", "critic_model_group", "reward_model_group", "initial_model_group"]
    init = _params(RemoteExperienceMaker.__init__)
    assert init[:8] == ["self", *parts, "kl_controller", "strategy", "tokenizer"]
    text = _source(RemoteExperienceMaker.__init__)  # what InfoExperienceMaker.replacing reads back
    assert all(f"self.{name} = " in text for name in [*parts, "kl_ctl", "strategy", "tokenizer"])


# --------------------------------------------------------------------------- experience maker


def the_experience_maker_has_the_overridden_methods():
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker as Maker

    assert _params(Maker._flatten_results) == ["self", "refs", "duplicate_factor"]
    assert _params(Maker.make_experience) == ["self", "samples_list"]
    assert _params(Maker.make_experience_batch) == ["self", "rollout_samples"]
    assert _params(Maker.compute_advantages_and_returns) == ["self", "experiences"]
    gae = ["self", "values", "rewards", "action_mask", "gamma", "lambd"]
    assert _params(Maker.get_advantages_and_returns) == gae


def gae_receives_the_experiences_own_values():
    """Information-time GAE finds rho by the identity of ``experience.values``."""
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker as Maker

    calls = [
        n
        for n in ast.walk(_tree(Maker.compute_advantages_and_returns))
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "self.get_advantages_and_returns"
    ]
    assert calls and all(ast.unparse(call.args[0]) == "experience.values" for call in calls)


def the_actor_forward_results_pass_through_flatten_results():
    """The actor workers' ``(log_probs, entropy)`` tuples are split in ``_flatten_results``."""
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker as Maker

    assert "self._flatten_results" in _calls(Maker.make_experience)


def experience_fields_are_declared_with_tensor_roles():
    """``experience_fields`` adds "step" fields, which OpenRLHF batches, splits and un-pads by role."""
    import dataclasses

    from openrlhf.trainer.ppo_utils import experience

    roles = {f.name: f.metadata.get("tensor_role") for f in dataclasses.fields(experience.Experience)}
    assert roles["action_log_probs"] == "step" and roles["rewards"] == "episode"
    assert callable(experience.tensor_field)
    assert "fields(Experience)" in _source(experience.split_experience_batch)


# --------------------------------------------------------------------------- actor worker


def the_actor_forward_copy_matches_upstream():
    """``InfoPolicyModelActor.forward`` restates upstream's worker ``forward`` (returning the entropy
    too): upstream's body is pinned, so a change to it is seen here and the copy is revisited."""
    from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

    body = _source(PolicyModelActor.__ray_actor_class__.forward)
    assert hashlib.sha256(body.encode()).hexdigest()[:16] == UPSTREAM_FORWARD_SHA


def the_actor_computes_entropy_through_the_module_global():
    """``old_policy.install_chunked_entropy`` rebinds ``openrlhf.models.actor.compute_entropy``."""
    import openrlhf.models.actor as actor_module

    assert _module_imports(actor_module).get("compute_entropy") == "utils"
    assert "compute_entropy" in _calls(actor_module.Actor.forward)


def training_step_calls_the_loss_and_returns_entropy():
    """``policy_loss`` wraps ``trainer.training_step`` and ``trainer.actor_loss_fn``; DAPO-FT's mask
    reads the training forward's ``output.entropy`` (``actor.entropy_coef`` set)."""
    from openrlhf.trainer.ray.ppo_actor import ActorPPOTrainer

    assert _params(ActorPPOTrainer.training_step) == [
        "self",
        "experience",
        "kl_ctl",
        "step",
        "loss_batch_info",
    ]
    assert "self.actor_loss_fn" in _calls(ActorPPOTrainer.training_step)
    assert "return_entropy=self.args.actor.entropy_coef is not None" in _source(ActorPPOTrainer.training_step)
    assert "self.training_step" in _calls(ActorPPOTrainer.ppo_train)


def the_policy_loss_clamps_with_its_eps_attributes():
    """InfoPPO's per-token bounds are set as ``clip_eps_low/high`` tensors for one call."""
    from openrlhf.models.loss import PolicyLoss

    text = _source(PolicyLoss.forward)
    assert "ratio.clamp(1 - self.clip_eps_low, 1 + self.clip_eps_high)" in text


def hf_copies_are_named_after_their_tag():
    """``checkpoints.rotate_hf_copies`` removes ``ckpt.path/<tag>_hf`` directories."""
    from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

    assert 'f"{tag}_hf"' in _source(PolicyModelActor.__ray_actor_class__.save_checkpoint)


# --------------------------------------------------------------------------- sample generation


def the_recorder_sees_every_response_before_filtering():
    """``step_metrics.RolloutRecorder`` wraps these three methods of one ``SamplesGenerator``."""
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator

    assert "self._generate_vllm" in _calls(SamplesGenerator.generate_samples)
    generate = " ".join(_source(SamplesGenerator.generate_samples).split())
    assert "experiences, prompts_consumed, dl_exhausted = self._generate_vllm(" in generate
    batch = _source(SamplesGenerator._generate_vllm)
    assert "self._process_response_into_experience(response, **generate_kwargs)" in batch
    assert "return accepted_experiences, prompts_consumed, exhausted" in batch


def rollouts_reach_an_engine_through_generate_responses():
    """The CPU engine inherits ``generate_responses``; the executor calls its ``generate``."""
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    assert "llm_engine.generate_responses.remote" in _calls(SamplesGenerator._dispatch_prompts_to_vllm)
    assert "self.executor.execute" in _calls(RolloutRayActor.__ray_actor_class__.generate_responses)
    assert "llm_engine.generate" in _calls(SingleTurnAgentExecutor.execute)


def the_engines_are_placed_through_two_module_names():
    """``create_vllm_engines`` places its engines with the module's ``placement_group`` (GPU bundles)
    and builds each from the module's ``RolloutRayActor`` through ``.options(num_gpus=...)``: the two
    names ``cpu/rollout.place_engines_on_cpus`` rebinds."""
    import openrlhf.trainer.ray.vllm_engine as vllm_engine

    assert _module_imports(vllm_engine).get("placement_group") == "ray.util.placement_group"
    text = _source(vllm_engine.create_vllm_engines)
    assert 'bundles = [{"GPU": 1, "CPU": 1}' in text
    assert 'shared_pg = placement_group(bundles, strategy="PACK")' in text
    options = [
        call
        for call in ast.walk(_tree(vllm_engine.create_vllm_engines))
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "RolloutRayActor.options"
    ]
    assert len(options) == 1
    assert {k.arg for k in options[0].keywords} == {"num_cpus", "num_gpus", "scheduling_strategy"}


def the_engine_builds_vllm_from_its_kwargs():
    """The engine's ``__init__`` builds vLLM's engine from its keyword arguments, which name the worker
    extension (upstream's ``WorkerWrap``; ``CpuRolloutRayActor`` names ``CpuWorkerWrap``)."""
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor, create_vllm_engines

    init = RolloutRayActor.__ray_actor_class__.__init__
    assert inspect.iscoroutinefunction(init)
    assert "vllm.AsyncEngineArgs(*args, **self.kwargs)" in _source(init)
    worker = '"worker_extension_cls": "openrlhf.trainer.ray.vllm_worker_wrap.WorkerWrap"'
    assert worker in _source(create_vllm_engines)


def the_weight_sync_group_is_opened_by_name():
    """The actor opens the sync group with its module's ``stateless_init_process_group`` (unless the
    group is Ray's) and the engine's ``WorkerWrap`` imports it at call time; the engine receives each
    parameter into a ``cuda`` buffer, and the actor flags the last one with ``empty_cache``."""
    import openrlhf.trainer.ray.ppo_actor as ppo_actor
    from openrlhf.trainer.ray.vllm_worker_wrap import WorkerWrap

    assert _module_imports(ppo_actor).get("stateless_init_process_group") == "openrlhf.utils.distributed_util"
    assert "stateless_init_process_group" in _calls(ppo_actor.ActorPPOTrainer._init_vllm_sync_group)
    init = _source(WorkerWrap.init_process_group)
    assert "from openrlhf.utils.distributed_util import stateless_init_process_group" in init
    assert _params(WorkerWrap.update_weight) == ["self", "name", "dtype", "shape", "empty_cache"]
    update = _source(WorkerWrap.update_weight)
    assert 'torch.empty(shape, dtype=dtype, device="cuda")' in update
    assert "self._model_update_group.broadcast(weight, src=0" in update
    broadcast = " ".join(_source(ppo_actor.ActorPPOTrainer.broadcast_to_vllm).split())
    assert "empty_cache=count == num_params" in broadcast


# --------------------------------------------------------------------------- strategy and schedule


def the_strategy_drives_the_engine_through_three_methods():
    """The grad-norm metric is DeepSpeed's pre-clip norm, read through the strategy."""
    from openrlhf.utils.deepspeed import DeepspeedStrategy

    assert "model.backward" in _calls(DeepspeedStrategy.backward)
    assert "model.step" in _calls(DeepspeedStrategy.optimizer_step)
    assert "model.get_global_grad_norm" in _calls(DeepspeedStrategy.get_grad_norm)


def the_warm_up_is_a_ratio_of_the_schedule():
    """``train/schedule.py`` counts the warm-up as upstream does."""
    from openrlhf.utils.deepspeed import DeepspeedStrategy

    text = _source(DeepspeedStrategy._ds_init_train_model)
    assert 'num_warmup_steps=math.ceil(scheduler_steps * cfg.get("lr_warmup_ratio", 0.03))' in text


def micro_batches_are_counted_as_the_validator_counts_them():
    """``train/validate.py``'s batch rules: the accumulation upstream computes, and dropped remainders."""
    from openrlhf.trainer.ray.ppo_actor import ActorPPOTrainer
    from openrlhf.utils.deepspeed import DeepspeedStrategy

    text = " ".join(_source(DeepspeedStrategy.setup_distributed).split())
    assert (
        "self.accumulated_gradient = ( self.train_batch_size * self.ring_attn_size * "
        "self.ds_tensor_parallel_size // self.micro_train_batch_size // self.world_size )"
    ) in text
    assert "drop_last=True" in _source(ActorPPOTrainer.ppo_train)


def the_ring_attention_pool_multiplies_the_token_budget():
    """DAPO/DAPO-FT's pool: OpenRLHF packs ``max_tokens_per_gpu x ring_attn_size`` per micro-batch."""
    from openrlhf.utils import seqlen_balancing

    text = _source(seqlen_balancing.get_minimum_num_micro_batch_size)
    assert "ring_attn_size" in text


def prompts_are_rendered_with_the_chat_template_as_eval_renders_them():
    """``data/templates.chat_prompt`` (eval's and the tasks' prompts) renders a problem as OpenRLHF's
    ``--data.apply_chat_template``."""
    from openrlhf.datasets.prompts_dataset import preprocess_data
    from tiny_model import _build_tokenizer

    from infoppo_cli.data.templates import chat_prompt

    tokenizer = _build_tokenizer()
    text = "What is 2 + 3?"
    upstream, _ = preprocess_data({"input": text}, apply_chat_template=tokenizer.apply_chat_template)
    assert chat_prompt(tokenizer, text) == upstream


# --------------------------------------------------------------------------- CPU run, batches, records


def the_actor_group_places_workers_by_gpu_bundles():
    """``CpuActorGroup`` hands upstream a CPU placement group: without one, a group of more than one
    worker asks Ray for GPU bundles; with one, every worker is scheduled into its bundle."""
    from openrlhf.trainer.ray.launcher import RayActorGroup

    text = _source(RayActorGroup._initiate_actors)
    assert "if self._num_gpus_per_node > 1 and pg is None:" in text
    assert 'bundles = [{"GPU": 1, "CPU": 1}' in text
    assert "placement_group_bundle_index=rank" in text and "self.ray_actor_type.options" in text
    options = [
        call
        for call in ast.walk(_tree(RayActorGroup._initiate_actors))
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "self.ray_actor_type.options"
    ]
    asked = {
        (k.arg, ast.unparse(k.value))
        for call in options
        for k in call.keywords
        if k.arg != "scheduling_strategy"
    }
    assert len(options) == 4 and asked == {
        ("num_cpus", "num_gpus_per_actor"),
        ("num_gpus", "num_gpus_per_actor"),
        ("resources", "self._resources"),
    }


def the_replay_buffers_are_built_from_the_module_name():
    """The CPU replay buffer replaces the name the actor and critic trainers construct their buffer
    from; upstream's buffer builds its device from ``torch.cuda.current_device()``."""
    import openrlhf.trainer.ray.ppo_actor as ppo_actor
    import openrlhf.trainer.ray.ppo_critic as ppo_critic
    from openrlhf.trainer.ppo_utils.replay_buffer import NaiveReplayBuffer

    for module, trainer in (
        (ppo_actor, ppo_actor.ActorPPOTrainer),
        (ppo_critic, ppo_critic.CriticPPOTrainer),
    ):
        assert _module_imports(module).get("NaiveReplayBuffer") == "ppo_utils"
        assert "NaiveReplayBuffer" in _calls(trainer.__init__)
    assert "torch.cuda.current_device" in _source(NaiveReplayBuffer.__init__)


CPU_WORKER_CUDA_CALLS = {
    "current_device",
    "synchronize",
    "empty_cache",
    "set_device",
    "current_stream",
    "is_available",
}
"""What ``cpu/torch_device`` answers on the CPU (five functions), and ``is_available`` (False there)."""


def _torch_cuda_names(tree: ast.AST) -> set[str]:
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "torch.cuda"
    }


def the_cpu_workers_call_five_torch_cuda_functions():
    """The modules a CPU run's workers execute call no other ``torch.cuda`` function."""
    import openrlhf.models.ring_attn_utils as ring_attn_utils
    import openrlhf.trainer.ppo_utils.replay_buffer as replay_buffer
    import openrlhf.trainer.ray.launcher as launcher
    import openrlhf.trainer.ray.ppo_actor as ppo_actor
    import openrlhf.trainer.ray.ppo_critic as ppo_critic
    import openrlhf.utils.deepspeed.deepspeed as strategy
    import openrlhf.utils.deepspeed.deepspeed_utils as deepspeed_utils
    import openrlhf.utils.distributed_util as distributed_util
    import openrlhf.utils.loss_utils as loss_utils

    for module in (
        ring_attn_utils,
        replay_buffer,
        launcher,
        ppo_critic,
        strategy,
        deepspeed_utils,
        distributed_util,
        loss_utils,
    ):
        assert _torch_cuda_names(ast.parse(inspect.getsource(module))) <= CPU_WORKER_CUDA_CALLS, module
    assert _torch_cuda_names(ast.parse(inspect.getsource(ppo_actor))) <= CPU_WORKER_CUDA_CALLS


def openrlhf_imports_from_vllm_what_vllm_holds():
    """Every vLLM name an OpenRLHF module imports when it is loaded is in the installed vLLM (its CPU
    build here: no stand-in)."""
    import importlib
    from pathlib import Path

    import openrlhf

    needed = set()
    for path in Path(openrlhf.__file__).parent.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "vllm":
                needed.update((node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Import):
                needed.update((a.name, None) for a in node.names if a.name.split(".")[0] == "vllm")
    assert ("vllm", "SamplingParams") in needed and ("vllm.inputs", "TokensPrompt") in needed
    for module, name in sorted(needed, key=str):
        imported = importlib.import_module(module)
        assert name is None or hasattr(imported, name), (module, name)


def ring_attention_imports_flash_attn_when_loaded():
    """OpenRLHF's actor imports ring attention, which imports flash-attn at module level, whose package
    imports its CUDA extension: ``cpu/stand_ins`` registers that extension where it is missing."""
    import importlib.util
    from pathlib import Path

    import openrlhf.models.actor as actor_module
    import openrlhf.models.ring_attn_utils as ring_attn_utils

    assert _module_imports(actor_module).get("gather_and_pad_tensor") == "ring_attn_utils"
    assert _module_imports(ring_attn_utils).get("pad_input") == "flash_attn.bert_padding"
    source = Path(importlib.util.find_spec("flash_attn.flash_attn_interface").origin).read_text()
    loading = [
        node for node in ast.parse(source).body if not isinstance(node, ast.FunctionDef | ast.ClassDef)
    ]
    top = {
        alias.name
        for stmt in loading
        for node in ast.walk(stmt)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert "flash_attn_2_cuda" in top


def the_strategy_builds_one_cuda_device_mesh():
    """``cpu/strategy.py`` rebinds the module's ``init_device_mesh``: the strategy's only CUDA call
    besides ``torch.cuda.set_device`` (pointed at the CPU by ``torch_device``)."""
    import openrlhf.utils.deepspeed.deepspeed as strategy_module

    assert _module_imports(strategy_module).get("init_device_mesh") == "torch.distributed.device_mesh"
    setup = _source(strategy_module.DeepspeedStrategy.setup_distributed)
    assert "init_device_mesh(" in setup and '"cuda"' in setup and "deepspeed.init_distributed" in setup


def a_short_batch_ends_the_pass():
    """``full_batches`` returns no samples for a short batch at the end of a pass: upstream's loop then
    starts its next pass (a new dataloader iterator) instead of training it."""
    from openrlhf.trainer.ppo_trainer import PPOTrainer
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator

    fit = " ".join(_source(PPOTrainer.__ray_actor_class__.fit).split())
    assert "if not rollout_samples: if is_exhausted: break continue" in fit
    generate = _source(SamplesGenerator.generate_samples)
    assert "self._dataloader_iter = iter(self.prompts_dataloader)" in generate
    assert "return rollout_samples, filter_pass_rate, prompts_consumed, exhausted" in generate


def dynamic_filtering_reads_the_scores():
    """The reward's ``scores`` (always 1/0) decide DAPO's filter; ``rewards`` may be +1/-1."""
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator

    text = _source(SamplesGenerator._generate_vllm)
    assert "scores = [e.scores[0].item() for e in experiences]" in text


def eval_metrics_are_mean_rewards():
    """``eval_<bench>_pass1`` is the mean reward: ``metrics_log.eval_fields`` turns a +1/-1 mean into an
    accuracy."""
    from openrlhf.trainer.ppo_trainer import compute_eval_metrics

    text = _source(compute_eval_metrics)
    assert "all_rewards" in text and "_pass1" in text


def dynamic_batches_are_built_per_training_pass():
    """DAPO/DAPO-FT's token-packed micro-batches: the replay buffer rebuilds them in ``ppo_train``."""
    from openrlhf.trainer.ray.ppo_actor import ActorPPOTrainer

    assert "self.replay_buffer.setup_dynamic_batch" in _calls(ActorPPOTrainer.ppo_train)


def ring_attention_gathers_the_entropy():
    """DAPO-FT's mask reads ``output.entropy``: under ring attention it is gathered and padded first."""
    import openrlhf.models.actor as actor_module

    assert "gather_and_pad_tensor(entropy, ring_attn_group" in _source(actor_module.Actor.forward)


def the_loss_is_divided_by_batch_num_tokens():
    """DAPO-FT scales ``batch_num_tokens`` by the kept share so its loss is a mean over kept tokens."""
    from openrlhf.models.loss import PolicyLoss, aggregate_loss

    assert "batch_num_tokens" in _params(PolicyLoss.forward)
    assert "return (loss * loss_mask).sum() / batch_num_tokens * dp_size" in _source(aggregate_loss)


def the_final_weights_are_saved_by_save_model():
    """``InfoPolicyModelActor.save_model`` fixes the final weights' mode after upstream's save."""
    from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

    save = PolicyModelActor.__ray_actor_class__.save_model
    assert _params(save) == ["self"] and "args.ckpt.output_dir" in _source(save)


def the_engine_counts_its_optimizer_steps():
    """``InfoPolicyModelActor.fit`` reads DeepSpeed's ``global_steps`` after upstream's ``fit``."""
    from deepspeed.runtime.engine import DeepSpeedEngine
    from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

    assert "self.global_steps += 1" in _source(DeepSpeedEngine._take_model_step)
    fit = PolicyModelActor.__ray_actor_class__.fit
    assert _params(fit) == ["self", "kl_ctl"] and "self.trainer.ppo_train" in _calls(fit)


UPSTREAM_FORWARD_SHA = "cb801a0aab67c88b"
"""sha256 (first 16 hex) of OpenRLHF 0.11.2's ``PolicyModelActor.forward`` source."""

CONTRACT: list[Callable[[], None]] = [
    train_ppo_ray_reads_the_rebound_names,
    train_imports_the_trainer_at_call_time,
    the_master_port_comes_from_get_free_port,
    the_cli_hierarchizes_through_the_module_attribute,
    the_main_block_parses_before_it_hierarchizes,
    train_passes_get_max_steps_to_the_workers,
    fit_draws_samples_through_generate_samples,
    fit_evaluates_every_eval_steps,
    a_spent_step_budget_ends_the_remaining_episodes,
    the_progress_bars_are_the_module_global_tqdm,
    fit_closes_only_its_trackers_after_the_loop,
    checkpoints_are_saved_every_save_steps,
    the_best_checkpoint_follows_best_metric_key,
    the_experience_maker_is_built_in_the_trainer,
    the_experience_maker_has_the_overridden_methods,
    gae_receives_the_experiences_own_values,
    the_actor_forward_results_pass_through_flatten_results,
    experience_fields_are_declared_with_tensor_roles,
    the_actor_forward_copy_matches_upstream,
    the_actor_computes_entropy_through_the_module_global,
    training_step_calls_the_loss_and_returns_entropy,
    the_policy_loss_clamps_with_its_eps_attributes,
    hf_copies_are_named_after_their_tag,
    the_recorder_sees_every_response_before_filtering,
    rollouts_reach_an_engine_through_generate_responses,
    the_engines_are_placed_through_two_module_names,
    the_engine_builds_vllm_from_its_kwargs,
    the_weight_sync_group_is_opened_by_name,
    the_strategy_drives_the_engine_through_three_methods,
    the_warm_up_is_a_ratio_of_the_schedule,
    micro_batches_are_counted_as_the_validator_counts_them,
    the_ring_attention_pool_multiplies_the_token_budget,
    prompts_are_rendered_with_the_chat_template_as_eval_renders_them,
    the_actor_group_places_workers_by_gpu_bundles,
    the_replay_buffers_are_built_from_the_module_name,
    the_cpu_workers_call_five_torch_cuda_functions,
    openrlhf_imports_from_vllm_what_vllm_holds,
    ring_attention_imports_flash_attn_when_loaded,
    the_strategy_builds_one_cuda_device_mesh,
    a_short_batch_ends_the_pass,
    dynamic_filtering_reads_the_scores,
    eval_metrics_are_mean_rewards,
    dynamic_batches_are_built_per_training_pass,
    ring_attention_gathers_the_entropy,
    the_loss_is_divided_by_batch_num_tokens,
    the_engine_counts_its_optimizer_steps,
    the_final_weights_are_saved_by_save_model,
]


@pytest.mark.parametrize("touchpoint", CONTRACT, ids=lambda check: check.__name__)
def test_openrlhf_still_offers(touchpoint):
    touchpoint()


def test_every_patch_is_pinned_by_a_touchpoint():
    from infoppo_cli.openrlhf_adapter.patches import PATCHES

    names = {check.__name__ for check in CONTRACT}
    assert {patch.pinned_by for patch in PATCHES} <= names
