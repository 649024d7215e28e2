"""OpenRLHF 0.11.2's Ray PPO trainer, end to end on CPU, with infoppo's classes.

What runs is OpenRLHF's own code: ``PPOTrainer.fit`` (as infoppo's ``InfoPPOTrainer``), its
``SamplesGenerator`` and dynamic filtering, ``RolloutRayActor.generate_responses`` with its
``SingleTurnAgentExecutor`` (which loads infoppo's ``reward_func.py`` by path and grades), the
experience maker (infoppo's subclass), Ray's pickling of experiences to the actor and critic workers
(``InfoPolicyModelActor`` and upstream's ``CriticModelActor``, each in its own Ray process), the
``NaiveReplayBuffer``, ``ppo_train``/``training_step`` and their metric aggregation, in-training
evaluation, and ``metrics.jsonl``.

Stand-ins, all for CUDA-only pieces:

* vLLM's generation (:class:`GenerationStandIn`, the only fake of the brief): the tiny model samples a
  few tokens; every other sample of a problem listed in ``answers`` then ends with its boxed answer,
  so groups have mixed rewards (a problem not listed is always wrong: dynamic filtering drops it);
* DeepSpeed's engine (:class:`CpuStrategy`): OpenRLHF's strategy with a one-process gloo group, a
  CPU device mesh, torch's AdamW and the same Hugging Face scheduler;
* three ``torch.cuda`` calls in the worker processes (:func:`install_cpu_worker_shims`).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import math
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from openrlhf.utils.deepspeed import DeepspeedStrategy

ENTRY_MODULE = "openrlhf.cli.train_ppo_ray"


def finalize_args(args: SimpleNamespace) -> SimpleNamespace:
    """Run the checks and derivations ``train_ppo_ray`` applies after ``hierarchize`` (its own
    statements, read from the installed file, up to the ``train(args)`` call)."""
    spec = importlib.util.find_spec(ENTRY_MODULE)
    with open(spec.origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    guard = next(
        node for node in tree.body if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)
    )
    start = next(i for i, node in enumerate(guard.body) if "hierarchize(" in ast.unparse(node)) + 1
    body = []
    for node in guard.body[start:]:
        if ast.unparse(node).startswith("train("):
            break
        body.append(node)
    code = compile(ast.Module(body=body, type_ignores=[]), spec.origin, "exec")
    exec(code, {"args": args, "print": lambda *a, **k: None})
    return args


class CpuStrategy(DeepspeedStrategy):
    """OpenRLHF's strategy in one CPU process: DeepSpeed's engine calls replaced by torch's."""

    def setup_distributed(self, timeout=None) -> None:
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh

        torch.manual_seed(self.seed)
        if not dist.is_initialized():
            dist.init_process_group("gloo", rank=0, world_size=1)
        self.world_size = 1
        self.ds_device_mesh = init_device_mesh("cpu", (1, 1, 1), mesh_dim_names=("dp", "sp", "tp"))
        self.ring_attn_rank = 0
        self.accumulated_gradient = max(self.train_batch_size // self.micro_train_batch_size, 1)

    def prepare(self, *models):
        from transformers.trainer import get_scheduler

        prepared = []
        for model, cfg in models:
            optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["adam"]["lr"])
            name = cfg["lr_scheduler"]
            kwargs = {"min_lr_rate": cfg.get("min_lr_ratio", 0.1)} if "min_lr" in name else {}
            steps = cfg["scheduler_steps"]
            scheduler = get_scheduler(
                name,
                optimizer,
                num_warmup_steps=math.ceil(steps * cfg.get("lr_warmup_ratio", 0.03)),
                num_training_steps=steps,
                scheduler_specific_kwargs=kwargs,
            )
            prepared.append((model, optimizer, scheduler))
        return prepared[0] if len(prepared) == 1 else prepared

    def backward(self, loss, model, optimizer, **kwargs) -> None:
        loss.backward()

    def optimizer_step(self, optimizer, model, scheduler, name="model", **kwargs) -> None:
        self._grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()

    def get_grad_norm(self, model) -> float:
        return getattr(self, "_grad_norm", 0.0)

    def save_ckpt(self, model, save_dir, tag=None, max_num=3, max_mem=1000, client_state=None, **kwargs):
        path = os.path.join(save_dir, tag)
        os.makedirs(path, exist_ok=True)
        torch.save({"client_state": client_state or {}}, os.path.join(path, "state.pt"))

    def load_ckpt(self, model, load_dir, tag=None, **kwargs):
        """The newest checkpoint's client states (the weights stay the base model's on CPU)."""
        saved = sorted(Path(load_dir).glob("*/state.pt"), key=lambda path: path.stat().st_mtime)
        if not saved:
            return None, {}
        return str(saved[-1].parent), torch.load(saved[-1])["client_state"]

    def save_model(self, model, tokenizer, output_dir, **kwargs) -> None:
        os.makedirs(output_dir, exist_ok=True)
        self._unwrap_model(model).save_pretrained(output_dir)
        tokenizer.save_pretrained(output_dir)


def cpu_strategy(args: SimpleNamespace) -> CpuStrategy:
    """A :class:`CpuStrategy` built as OpenRLHF's ``get_strategy`` builds its strategy."""
    return CpuStrategy(
        seed=args.train.seed,
        micro_train_batch_size=args.train.micro_batch_size,
        train_batch_size=args.train.batch_size,
        zero_stage=args.ds.zero_stage,
        args=args,
    )


def install_cpu_worker_shims(actor_self: Any = None) -> int:
    """In a model worker: the ``torch.cuda`` calls OpenRLHF makes outside its strategy run on CPU."""
    import openrlhf.trainer.ray.ppo_actor as ppo_actor
    import openrlhf.trainer.ray.ppo_critic as ppo_critic
    from openrlhf.trainer.ppo_utils.replay_buffer import NaiveReplayBuffer

    torch.cuda.current_device = lambda: "cpu"
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.empty_cache = lambda: None

    class CpuReplayBuffer(NaiveReplayBuffer):
        def __init__(self, *args, **kwargs):
            torch.cuda.current_device = lambda: 0  # upstream formats f"cuda:{index}" here
            try:
                super().__init__(*args, **kwargs)
            finally:
                torch.cuda.current_device = lambda: "cpu"
            self.target_device = torch.device("cpu")

    ppo_actor.NaiveReplayBuffer = ppo_critic.NaiveReplayBuffer = CpuReplayBuffer
    return os.getpid()


def _rollout_actor_class():
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor

    return getattr(RolloutRayActor, "__ray_actor_class__", RolloutRayActor)


class GenerationStandIn(_rollout_actor_class()):
    """OpenRLHF's rollout actor with vLLM's ``generate`` replaced (see the module docstring)."""

    def __init__(
        self, model_dir: str, reward_file: str, answers: dict[str, str], new_tokens: int = 6
    ) -> None:
        from openrlhf.utils.agent import SingleTurnAgentExecutor
        from transformers import AutoModelForCausalLM, AutoTokenizer

        os.environ.setdefault("INFOPPO_REWARD_WORKERS", "1")
        self.executor = SingleTurnAgentExecutor(reward_file)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.answers = answers
        self.new_tokens = new_tokens
        self.calls: dict[str, int] = {}

    def get_num_unfinished_requests(self) -> int:
        return 0

    def wake_up(self, *args, **kwargs) -> None:
        return None

    def sleep(self, *args, **kwargs) -> None:
        return None

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        ids = torch.tensor([prompt_token_ids])
        budget = min(self.new_tokens, sampling_params.max_tokens)
        with torch.no_grad():
            out = self.model.generate(
                ids, max_new_tokens=budget, do_sample=True, pad_token_id=self.tokenizer.pad_token_id
            )
        tokens = out[0, ids.shape[1] :].tolist()
        prompt = self.tokenizer.decode(prompt_token_ids)
        answer = next((a for problem, a in self.answers.items() if problem in prompt), None)
        self.calls[prompt] = self.calls.get(prompt, 0) + 1  # every other sample of a prompt is right
        if answer is not None and self.calls[prompt] % 2:
            tokens += self.tokenizer.encode(f" Answer: \\boxed{{{answer}}}", add_special_tokens=False)
        tokens = tokens[: sampling_params.max_tokens]
        truncated = self.tokenizer.eos_token_id not in tokens
        output = SimpleNamespace(
            token_ids=tokens, finish_reason="length" if truncated else "stop", logprobs=None
        )
        await asyncio.sleep(0)
        return SimpleNamespace(outputs=[output])


def start_generation_stand_in(ray, model_dir, reward_file, answers):
    """The stand-in as an async Ray actor, called exactly as OpenRLHF calls a vLLM engine."""
    remote = ray.remote(num_cpus=0)(GenerationStandIn)
    return remote.remote(str(model_dir), str(reward_file), answers)


def model_group(ray_actor_type):
    """One CPU worker of ``ray_actor_type`` in OpenRLHF's own ``RayActorGroup``, shims installed."""
    import ray
    from openrlhf.trainer.ray.launcher import RayActorGroup

    group = RayActorGroup(1, 1, ray_actor_type, num_gpus_per_actor=0)
    ray.get([handle.__ray_call__.remote(install_cpu_worker_shims) for handle in group._actor_handlers])
    return group


def build_trainer(args, model_dir, engines):
    """infoppo's trainer (the class under its Ray wrapper) in this process, its models in Ray workers,
    wired as ``train_ppo_ray.train`` wires them."""
    import ray
    from openrlhf.trainer.ray.ppo_critic import CriticModelActor

    from infoppo_cli.openrlhf_adapter.actors import InfoPolicyModelActor, InfoPPOTrainer

    strategy = cpu_strategy(args)
    actor_group = model_group(InfoPolicyModelActor)
    critic_group = model_group(CriticModelActor) if args.critic.model_name_or_path else None
    generate_kwargs = dict(
        do_sample=True,
        max_len=args.data.max_len,
        max_new_tokens=args.rollout.max_new_tokens,
        temperature=args.rollout.temperature,
        top_p=args.rollout.top_p,
    )
    trainer_class = InfoPPOTrainer.__ray_actor_class__
    trainer = trainer_class(
        str(model_dir), strategy, actor_group, critic_group, None, None, engines, **generate_kwargs
    )
    trainer.broadcast_to_vllm = lambda: None  # weight sync is vLLM's side: the stand-in keeps its own
    steps = trainer.get_max_steps()
    refs = actor_group.async_init_model_from_pretrained(strategy, str(model_dir), steps, None)
    if critic_group is not None:
        refs += critic_group.async_init_model_from_pretrained(strategy, str(model_dir), steps)
    ray.get(refs)
    return trainer


def run_args(argv: list[str]) -> SimpleNamespace:
    """OpenRLHF's parsed, hierarchised and checked arguments for ``argv`` (``--infotime.*`` included)."""
    from openrlhf.utils.config import hierarchize

    from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser
    from infoppo_cli.openrlhf_adapter.settings import split_argv

    settings, rest = split_argv(argv)
    args = finalize_args(hierarchize(openrlhf_parser().parse_args(rest)))
    args.infotime = settings.as_namespace()
    return args


def tiny_overrides() -> list[str]:
    """``--set`` values that shrink a preset's run to seconds on CPU (sizes, attention, no packing)."""
    values = [
        "rollout.batch_size=2",
        "rollout.n_samples_per_prompt=4",
        "rollout.micro_batch_size=4",
        "train.batch_size=8",
        "train.micro_batch_size=4",
        "rollout.max_new_tokens=24",
        "data.max_len=160",
        "ds.attn_implementation=sdpa",
        "ds.param_dtype=bf16",
        "ds.packing_samples=false",
        "train.dynamic_batch_enable=false",
        "train.colocate_all=false",
        "vllm.enable_sleep=false",
        "ds.enable_sleep=false",
        "actor.gradient_checkpointing_enable=false",
        "ckpt.save_steps=-1",
        "actor.adam.lr=1e-3",
        "critic.adam.lr=1e-3",
    ]
    return values


def add_probe_metrics(actor_self) -> None:
    """Runs in the actor worker: ``probe_float`` (a Python float) and ``probe_tensor`` (a 0-d tensor)
    in every micro-batch's ``info``, as a future metric of either type would arrive."""
    trainer = actor_self.trainer
    upstream = trainer.training_step

    def training_step(experience, *args, **kwargs):
        experience.info["probe_float"] = 0.5
        experience.info["probe_tensor"] = torch.tensor(0.5)
        return upstream(experience, *args, **kwargs)

    trainer.training_step = training_step
