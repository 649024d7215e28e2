"""Resolve ``infoppo train``'s options into one plan: OpenRLHF flags plus infoppo's settings.

Precedence, lowest first: the model preset's ``[openrlhf]``, the method (its recipe, e.g. DAPO's
batch shape, beats a preset's generic value), the preset's ``[method_overrides.METHOD]`` (a node
that must scale a recipe says why there), what the plan derives (model, lengths, GPU layout, data,
reward, outputs, schedule), the command-line options, and finally ``--set KEY=VALUE``.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.infotime import NORM_MODES, validate_hyperparameters
from infoppo_cli.openrlhf_adapter import flags as openrlhf_flags
from infoppo_cli.resources import require_openrlhf
from infoppo_cli.train.eval_set import EvalPlan, eval_plan
from infoppo_cli.train.methods import Method, method
from infoppo_cli.train.presets import Preset, preset
from infoppo_cli.train.schedule import (
    ACTOR_SCHEDULER,
    CRITIC_SCHEDULER,
    WarmupPlan,
    count_prompts,
    warmup_plan,
)
from infoppo_cli.train.validate import check_flags, check_local_data, check_model, resolve_seed

DEFAULT_DATA = "data/dapo-math-17k.jsonl"
LAUNCH_MODULE = "infoppo_cli.openrlhf_adapter.launch"
REWARD_FILE = Path(__file__).resolve().parents[1] / "openrlhf_adapter" / "reward_func.py"
"""The reward OpenRLHF loads with ``--reward.remote_url`` (shared grading with ``infoppo eval``)."""
_HF_DATASET_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


@dataclass
class TrainRequest:
    """What the user asked for on the command line (``None`` means: the preset's value)."""

    preset: str
    method: str = "infoppo"
    methods_file: str | None = None
    model: str | None = None
    data: str | None = None
    output_dir: str | None = None
    gamma: float | None = None
    lambd: float | None = None
    eps_low_info: float | None = None
    eps_high_info: float | None = None
    norm: str | None = None
    seed: int | None = None
    """None: ``--set train.seed`` if given, else 42."""
    address: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    resume: bool = False
    overrides: list[str] = field(default_factory=list)
    eval_bench: str | None = None
    """In-training eval (``train/eval_set.py``): None = AIME24 and AIME25; ``none`` switches it off."""
    eval_every: int | None = None
    eval_samples: int | None = None


@dataclass
class TrainPlan:
    """A resolved training run: every OpenRLHF flag and every infoppo setting, and where it writes."""

    request: TrainRequest
    preset: Preset
    method: Method
    output_dir: Path
    data: str
    flags: dict[str, Any]
    infotime: dict[str, Any]
    warmup: WarmupPlan | None = None
    """The actor's warm-up; None only in a dry run whose data file does not exist yet."""
    evaluation: EvalPlan | None = None
    """The in-training evaluation (its ``eval.*`` flags are in ``flags``)."""
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)
    """Secrets given with ``--set`` (a wandb key), passed to the launched process in its environment
    only: ``flags`` and ``request`` hold a pointer or ``<redacted>`` (``openrlhf_adapter/flags.py``)."""

    def openrlhf_argv(self) -> list[str]:
        """The OpenRLHF flags as command-line tokens."""
        return openrlhf_flags.render(self.flags)

    def command(self) -> list[str]:
        """The exact process infoppo launches: our entry point around OpenRLHF's ``train_ppo_ray``."""
        ours = openrlhf_flags.render({f"infotime.{k}": v for k, v in self.infotime.items()})
        return [sys.executable, "-m", LAUNCH_MODULE, *ours, *self.openrlhf_argv()]


def _check_option_fits_method(req: TrainRequest, chosen: Method) -> None:
    if not chosen.uses_critic and (req.gamma is not None or req.lambd is not None):
        raise UsageError(f"--gamma/--lambd need a critic (GAE); {chosen.name} has none ({chosen.advantage})")
    clip_only = {"--eps-low-info": req.eps_low_info, "--eps-high-info": req.eps_high_info}
    given = [name for name, value in clip_only.items() if value is not None]
    if given and chosen.clip != "adaptive":
        raise UsageError(
            f"{', '.join(given)} only apply to a method with the adaptive clip, not {chosen.name}"
        )
    if req.norm is not None and not chosen.uses_rho:
        raise UsageError(f"--norm only applies to a method that uses rho, not {chosen.name}")


def _check_values(req: TrainRequest) -> None:
    try:
        validate_hyperparameters(req.gamma, req.lambd, req.eps_low_info, req.eps_high_info)
    except ValueError as exc:
        raise UsageError(str(exc).replace("lambd ", "--lambd ").replace("gamma ", "--gamma ")) from None
    if req.norm is not None and req.norm not in NORM_MODES:
        raise UsageError(f"unknown --norm {req.norm!r}; choose one of: {', '.join(NORM_MODES)}")
    for name, value in (("--nodes", req.nodes), ("--gpus-per-node", req.gpus_per_node)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be >= 1, got {value}")


def _resolve_data(req: TrainRequest, strict: bool) -> str:
    """An absolute local path, or a Hugging Face dataset id; a missing local file is an error."""
    given = req.data or DEFAULT_DATA
    path = Path(given).expanduser()
    if path.exists():
        return str(path.resolve())
    if req.data and _HF_DATASET_ID.match(given) and not path.suffix:
        return given
    if req.data or strict:
        hint = "create it with `infoppo data prep dapo-math-17k`" if not req.data else "check the path"
        raise UsageError(f"data file {given} not found; {hint} or pass --data PATH")
    return str(path.resolve())


def _derived_flags(
    chosen: Preset, algo: Method, req: TrainRequest, data: str, out: Path, seed: int
) -> dict[str, Any]:
    nodes = req.nodes or chosen.nodes
    gpus = req.gpus_per_node or chosen.gpus_per_node
    if (nodes * gpus) % chosen.vllm_tensor_parallel:
        raise UsageError(
            f"{nodes * gpus} GPUs cannot hold vLLM engines of {chosen.vllm_tensor_parallel} GPUs"
        )
    model = req.model or chosen.model
    flags: dict[str, Any] = {"actor.model_name_or_path": model}
    if algo.uses_critic:
        flags["critic.model_name_or_path"] = model  # paper: the critic starts from the same model
        flags["critic.lr_warmup_ratio"] = 0.0  # paper: no critic warm-up
        flags["critic.lr_scheduler"] = CRITIC_SCHEDULER
    flags["actor.lr_scheduler"] = ACTOR_SCHEDULER
    for role in ("actor", "critic", "ref", "reward"):
        flags[f"{role}.num_nodes"] = nodes
        flags[f"{role}.num_gpus_per_node"] = gpus
    flags["vllm.num_engines"] = nodes * gpus // chosen.vllm_tensor_parallel
    flags["vllm.tensor_parallel_size"] = chosen.vllm_tensor_parallel
    flags["data.max_len"] = chosen.max_prompt_tokens + chosen.max_response_tokens
    flags["rollout.max_new_tokens"] = chosen.max_response_tokens
    flags.update(
        {
            "data.prompt_dataset": data,
            "data.input_key": "prompt",
            "data.label_key": "label",
            "data.apply_chat_template": True,
            "reward.remote_url": str(REWARD_FILE),
            "train.seed": seed,
            "ckpt.path": str(out / "ckpt"),
            "ckpt.output_dir": str(out / "final"),
            "ckpt.load_enable": req.resume,
            "logger.tensorboard_dir": str(out / "tensorboard"),
        }
    )
    return flags


def _cli_flags(req: TrainRequest) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    if req.gamma is not None:
        flags["algo.advantage.gamma"] = req.gamma
    if req.lambd is not None:
        flags["algo.advantage.lambd"] = req.lambd
    return flags


def _infotime_settings(chosen: Preset, algo: Method, req: TrainRequest, out: Path) -> dict[str, Any]:
    settings: dict[str, Any] = {"method": algo.name, **algo.components(), **algo.infotime}
    for key in ("eps_low_info", "eps_high_info", "norm"):
        if getattr(req, key) is not None:
            settings[key] = getattr(req, key)
    settings["metrics_path"] = str(out / "metrics.jsonl")
    if req.address:
        settings["ray_address"] = req.address
    return settings


def _actor_warmup(chosen: Preset, flags: dict[str, Any], data: str, overrides: dict) -> WarmupPlan | None:
    """Set ``actor.lr_warmup_ratio`` to the preset's warm-up in RL steps (unless ``--set`` gives it)."""
    if not Path(data).exists() and Path(data).suffix in (".jsonl", ".parquet"):
        return None  # a dry run before `infoppo data prep`; a real run refused it already
    rows = count_prompts(data, str(flags.get("data.prompt_split", "train")))
    warmup = warmup_plan(flags, chosen.actor_warmup_steps, rows)
    if "actor.lr_warmup_ratio" in overrides:
        return None
    flags["actor.lr_warmup_ratio"] = warmup.ratio
    return warmup


def plan_training(req: TrainRequest, strict_data: bool = True) -> TrainPlan:
    """Resolve ``req`` into a :class:`TrainPlan`, validated against OpenRLHF's own parser.

    Raises :class:`UsageError` (one line) for an unknown preset or method, an invalid value, a
    missing data file (with ``strict_data``), or a ``--set`` that OpenRLHF would reject, and
    :class:`EnvironmentProblem` when the installed openrlhf is not the pinned version.
    """
    require_openrlhf()  # the flags and the adapter are OpenRLHF 0.11.2's
    chosen, algo = preset(req.preset), method(req.method, req.methods_file)
    _check_values(req)
    _check_option_fits_method(req, algo)
    overrides = dict(openrlhf_flags.parse_set_option(text) for text in req.overrides)
    seed = resolve_seed(req.seed, overrides)
    out = Path(req.output_dir or f"runs/{chosen.name}-{req.method}-seed{seed}").expanduser().resolve()
    data = _resolve_data(req, strict_data)

    recipe = algo.all_openrlhf()
    flags: dict[str, Any] = {**recipe, **chosen.openrlhf}
    flags.update(recipe)  # the method's recipe beats the preset's generic flags (order kept)
    flags.update(chosen.method_overrides.get(algo.name, {}))
    flags.update(_derived_flags(chosen, algo, req, data, out, seed))
    flags.update(_cli_flags(req))
    evaluation = eval_plan(req.eval_bench, req.eval_every, req.eval_samples)
    flags.update(evaluation.flags(out))
    flags.update(overrides)
    flags["train.seed"] = seed  # one value, whichever way it was given
    check_model(str(flags["actor.model_name_or_path"]))
    check_local_data(data, str(flags["data.input_key"]), str(flags["data.label_key"]))
    check_flags(flags)
    if flags.get("train.dynamic_batch_enable") and "train.max_tokens_per_gpu" not in overrides:
        # the 80/20 recipe packs micro-batches up to max prompt + max response tokens
        # (verl ppo_max_token_len_per_gpu); OpenRLHF's equivalent is train.max_tokens_per_gpu
        flags["train.max_tokens_per_gpu"] = flags["data.max_len"]
    warmup = _actor_warmup(chosen, flags, data, overrides)
    if flags.get("train.async_enable"):
        raise UsageError("OpenRLHF's async mode (train.async_enable) is not supported by infoppo; drop it")

    infotime = _infotime_settings(chosen, algo, req, out)
    secret_env = openrlhf_flags.secrets_to_environment(flags, dict(os.environ))
    req = replace(req, overrides=openrlhf_flags.redact_argv(req.overrides))
    plan = TrainPlan(req, chosen, algo, out, data, flags, infotime, warmup, evaluation, secret_env)
    openrlhf_flags.validate(plan.openrlhf_argv())
    return plan
