"""Resolve ``infoppo train``'s options into one plan: OpenRLHF flags plus infoppo's settings.

Precedence, lowest first: the method (``presets/methods.toml``), the model preset, the preset's
per-method overrides, what the plan derives (model, lengths, GPU layout, data, reward, outputs),
the command-line options, and finally ``--set KEY=VALUE``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.infotime import NORM_MODES, validate_hyperparameters
from infoppo_cli.openrlhf_adapter import flags as openrlhf_flags
from infoppo_cli.resources import require_openrlhf
from infoppo_cli.train.presets import Method, Preset, method, preset

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
    model: str | None = None
    data: str | None = None
    output_dir: str | None = None
    gamma: float | None = None
    lambd: float | None = None
    eps_low_info: float | None = None
    eps_high_info: float | None = None
    norm: str | None = None
    seed: int = 42
    address: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    resume: bool = False
    overrides: list[str] = field(default_factory=list)


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

    def openrlhf_argv(self) -> list[str]:
        """The OpenRLHF flags as command-line tokens."""
        return openrlhf_flags.render(self.flags)

    def command(self) -> list[str]:
        """The exact process infoppo launches: our entry point around OpenRLHF's ``train_ppo_ray``."""
        ours = openrlhf_flags.render({f"infotime.{k}": v for k, v in self.infotime.items()})
        return [sys.executable, "-m", LAUNCH_MODULE, *ours, *self.openrlhf_argv()]


def _check_option_fits_method(req: TrainRequest, chosen: Method) -> None:
    if not chosen.uses_critic and (req.gamma is not None or req.lambd is not None):
        raise UsageError(f"--gamma/--lambd need a critic (methods infoppo, ppo); {chosen.name} has none")
    info_only = {"--eps-low-info": req.eps_low_info, "--eps-high-info": req.eps_high_info, "--norm": req.norm}
    given = [name for name, value in info_only.items() if value is not None]
    if given and chosen.name != "infoppo":
        raise UsageError(f"{', '.join(given)} only apply to --method infoppo, not {chosen.name}")


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


def count_prompts(data: str) -> int | None:
    """Rows in a local JSONL/parquet prompt file (None for a Hugging Face id or another format)."""
    path = Path(data)
    if not path.is_file():
        return None
    if path.suffix == ".jsonl":
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    return None


def _warmup_ratio(chosen: Preset, flags: dict[str, Any], prompts: int | None) -> float | None:
    """OpenRLHF takes warm-up as a fraction of its scheduler steps; the paper gives 10 steps."""
    if prompts is None:
        return None
    per_step = int(flags["train.batch_size"])
    steps = prompts * int(flags["rollout.n_samples_per_prompt"]) // per_step
    steps *= int(flags.get("train.num_episodes", 1)) * int(flags.get("train.max_epochs", 1))
    return min(1.0, chosen.actor_warmup_steps / max(steps, 1))


def _derived_flags(chosen: Preset, algo: Method, req: TrainRequest, data: str, out: Path) -> dict[str, Any]:
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
            "train.seed": req.seed,
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
    settings: dict[str, Any] = {"method": algo.name, **algo.infotime}
    for key in ("eps_low_info", "eps_high_info", "norm"):
        if getattr(req, key) is not None:
            settings[key] = getattr(req, key)
    settings["metrics_path"] = str(out / "metrics.jsonl")
    if req.address:
        settings["ray_address"] = req.address
    return settings


def plan_training(req: TrainRequest, strict_data: bool = True) -> TrainPlan:
    """Resolve ``req`` into a :class:`TrainPlan`, validated against OpenRLHF's own parser.

    Raises :class:`UsageError` (one line) for an unknown preset or method, an invalid value, a
    missing data file (with ``strict_data``), or a ``--set`` that OpenRLHF would reject, and
    :class:`EnvironmentProblem` when the installed openrlhf is not the pinned version.
    """
    require_openrlhf()  # the flags and the adapter are OpenRLHF 0.11.2's
    chosen, algo = preset(req.preset), method(req.method)
    _check_values(req)
    _check_option_fits_method(req, algo)
    out = Path(req.output_dir or f"runs/{req.preset}-{req.method}-seed{req.seed}").expanduser().resolve()
    data = _resolve_data(req, strict_data)

    flags: dict[str, Any] = {}
    flags.update(algo.openrlhf)
    flags.update(chosen.openrlhf)
    flags.update(chosen.method_overrides.get(algo.name, {}))
    flags.update(_derived_flags(chosen, algo, req, data, out))
    flags.update(_cli_flags(req))
    overrides = dict(openrlhf_flags.parse_set_option(text) for text in req.overrides)
    flags.update(overrides)
    ratio = _warmup_ratio(chosen, flags, count_prompts(data))
    if ratio is not None and "actor.lr_warmup_ratio" not in overrides:
        flags["actor.lr_warmup_ratio"] = ratio
    if flags.get("train.async_enable"):
        raise UsageError("OpenRLHF's async mode (train.async_enable) is not supported by infoppo; drop it")

    plan = TrainPlan(req, chosen, algo, out, data, flags, _infotime_settings(chosen, algo, req, out))
    openrlhf_flags.validate(plan.openrlhf_argv())
    return plan
