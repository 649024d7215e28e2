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
from infoppo_cli.openrlhf_adapter import flags as openrlhf_flags
from infoppo_cli.openrlhf_adapter.checkpoints import disk_space_warnings
from infoppo_cli.openrlhf_adapter.device import DEVICES, Device
from infoppo_cli.openrlhf_adapter.metrics_log import BENCHMARK_MEAN
from infoppo_cli.openrlhf_adapter.settings import CONFIG_FILE, write_run_config
from infoppo_cli.resources import require_openrlhf
from infoppo_cli.rundir import RunDir
from infoppo_cli.train.builtin_task import BuildProgress, UnbuiltTask, resolve_task
from infoppo_cli.train.device import CpuCost, check_device, device_flags
from infoppo_cli.train.eval_set import EvalPlan, eval_plan
from infoppo_cli.train.length import RunLength, run_length
from infoppo_cli.train.methods import Method, method
from infoppo_cli.train.presets import Preset, preset
from infoppo_cli.train.request import DEFAULT_DATA, METHOD_SETTINGS, PREPARE_DATA, TrainRequest
from infoppo_cli.train.schedule import (
    ACTOR_SCHEDULER,
    CRITIC_SCHEDULER,
    WarmupPlan,
    count_prompts,
    warmup_plan,
)
from infoppo_cli.train.tracking import tracking_environment, tracking_flags
from infoppo_cli.train.validate import check_flags, check_local_data, check_model, resolve_seed

DEFAULT_DATA_ROWS = 17398
"""Prompts in ``infoppo data prep dapo-math-17k``'s output (1.79M rows de-duplicated): the run length
of a dry run made before that file exists is planned with this count."""
BEST_METRIC = BENCHMARK_MEAN
"""The best checkpoint is chosen on the mean over the in-training benchmarks, not on one benchmark."""
LAUNCH_MODULE = "infoppo_cli.openrlhf_adapter.launch"
REWARD_FILE = Path(__file__).resolve().parents[1] / "openrlhf_adapter" / "reward_func.py"
"""The reward OpenRLHF loads with ``--reward.remote_url`` (shared grading with ``infoppo eval``)."""
_HF_DATASET_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


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
    length: RunLength
    """How long the run is and what OpenRLHF needs for it (``train/length.py``)."""
    warmup: WarmupPlan | None = None
    """The actor's warm-up; None when ``--set actor.lr_warmup_ratio`` gives it."""
    evaluation: EvalPlan | None = None
    """The in-training evaluation (its ``eval.*`` flags are in ``flags``)."""
    warnings: list[str] = field(default_factory=list)
    """Things the user should know before launching (the run still may)."""
    notes: list[str] = field(default_factory=list)
    """How the plan adapted the method's recipe to this run (shown in the plan)."""
    cpu_cost: CpuCost | None = None
    """The estimate of a ``--device cpu`` run (``train/device.py``)."""
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)
    """Secrets given with ``--set`` (a wandb key), passed to the launched process in its environment
    only: ``flags`` and ``request`` hold a pointer or ``<redacted>`` (``openrlhf_adapter/flags.py``)."""
    tracking_env: dict[str, str] = field(default_factory=dict)
    """wandb's mode and directory for the launched process (``train/tracking.py``)."""
    problems: list[str] = field(default_factory=list)
    """What would refuse a launch on this machine, found by a dry run (``strict_data`` off), which
    plans on and reports each; a real launch is refused at the first."""
    typed_command: str | None = None
    """The ``infoppo`` command as the user typed it (secrets redacted), for the manifest; set by the CLI."""
    unbuilt_task: UnbuiltTask | None = None
    """The preset's task, when a dry run found it not built: the first real run builds it."""

    @property
    def device(self) -> Device:
        """Where the run trains (``openrlhf_adapter/device.py``)."""
        return DEVICES[self.infotime["device"]]

    @property
    def data_to_prepare(self) -> str | None:
        """The default data file when it does not exist yet (a dry run plans without it), else None."""
        path = Path(self.data)
        built_later = self.unbuilt_task is not None and self.unbuilt_task.holds(path)
        return self.data if path.is_absolute() and not path.exists() and not built_later else None

    def openrlhf_argv(self) -> list[str]:
        """The OpenRLHF flags as command-line tokens."""
        return openrlhf_flags.render(self.flags)

    @property
    def config_path(self) -> Path:
        """The run's configuration (``RUN/config.json``): infoppo's settings, which the launcher, the
        trainer and the reward read (``openrlhf_adapter/settings.py``)."""
        return self.output_dir / CONFIG_FILE

    def write_config(self) -> None:
        """Write the run's configuration (before its launch)."""
        write_run_config(self.config_path, self.infotime)

    def command(self) -> list[str]:
        """The exact process infoppo launches: our entry point around OpenRLHF's ``train_ppo_ray``, given
        the run's configuration and OpenRLHF's flags."""
        return [sys.executable, "-m", LAUNCH_MODULE, "--config", str(self.config_path), *self.openrlhf_argv()]


def _check_option_fits_method(req: TrainRequest, chosen: Method) -> None:
    for setting in METHOD_SETTINGS:
        if getattr(req, setting.name) is not None and not setting.takes(chosen):
            parts = ", ".join(chosen.components().values())
            raise UsageError(
                f"{setting.options[0]} only applies to a method {setting.applies_text}, not {chosen.name} "
                f"({parts})"
            )


def _check_values(req: TrainRequest) -> None:
    if req.device is not None and req.device not in DEVICES:
        raise UsageError(f"unknown --device {req.device!r}; choose one of: {', '.join(DEVICES)}")


def _resolve_data(req: TrainRequest, strict: bool) -> str:
    """An absolute local path, or a Hugging Face dataset id; a missing local file is an error."""
    given = req.data or DEFAULT_DATA
    path = Path(given).expanduser()
    if path.exists():
        return str(path.resolve())
    if req.data and _HF_DATASET_ID.match(given) and not path.suffix:
        return given
    if req.data or strict:
        hint = f"create it with {PREPARE_DATA}" if not req.data else "check the path"
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
        flags["critic.model_name_or_path"] = model  # InfoPPO's setup: the critic starts from the same model
        flags["critic.lr_warmup_ratio"] = 0.0  # InfoPPO's setup: no critic warm-up
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
            "ckpt.path": str(RunDir(out).ckpt),
            "ckpt.output_dir": str(RunDir(out).final),
            "ckpt.load_enable": req.resume,
            "logger.tensorboard_dir": str(RunDir(out).tensorboard),
        }
    )
    return flags


def _overlong_buffer(algo: Method, chosen: Preset) -> dict[str, Any]:
    """DAPO's overlong buffer in tokens: its share of the maximum response length (``methods.toml``)."""
    share = algo.infotime.get("overlong_buffer_frac")
    if share is None:
        return {}
    return {"reward.overlong_buffer_len": max(round(share * chosen.max_response_tokens), 1)}


def _given_settings(req: TrainRequest, carried_by_openrlhf: bool) -> dict[str, Any]:
    """The method settings the command line gives: by OpenRLHF flag (``algo.advantage.gamma``) for those
    OpenRLHF carries, else by name (infoppo's own)."""
    return {
        (setting.openrlhf if carried_by_openrlhf else setting.name): getattr(req, setting.name)
        for setting in METHOD_SETTINGS
        if getattr(req, setting.name) is not None and bool(setting.openrlhf) == carried_by_openrlhf
    }


def _infotime_settings(
    algo: Method, req: TrainRequest, out: Path, length: RunLength, device: str
) -> dict[str, Any]:
    settings: dict[str, Any] = {"method": algo.name, **algo.components(), **algo.infotime}
    settings.update(_given_settings(req, carried_by_openrlhf=False))
    settings["rl_steps"] = length.rl_steps
    settings["total_optimizer_steps"] = length.optimizer_steps
    settings["eval_before"] = req.eval_before
    settings["metrics_path"] = str(RunDir(out).metrics)
    if req.address:
        settings["ray_address"] = req.address
    settings["device"] = device
    if req.keep_ray_logs:
        settings["keep_ray_logs"] = True
    return settings


def _model_reachable(model: str, strict: bool) -> list[str]:
    """Refuse a model that cannot be loaded here; a dry run (``strict`` off) plans on when the reason is
    the Hub and reports it after the plan (a launch here would be refused)."""
    try:
        check_model(model)
    except UsageError as exc:
        if strict or model.startswith(("/", ".", "~")) or not _HF_DATASET_ID.match(model):
            raise  # a local path that is missing is missing wherever the run launches
        return [str(exc)]
    return []


def _rows(data: str, flags: dict[str, Any], unbuilt: UnbuiltTask | None) -> tuple[int, bool]:
    """Prompts in the data, and whether that count is the expected one of a file not yet prepared."""
    if unbuilt is not None and unbuilt.holds(data):
        return unbuilt.prompts, False  # a dry run before the first real run builds the task
    if not Path(data).exists() and Path(data).suffix in (".jsonl", ".parquet"):
        return DEFAULT_DATA_ROWS, True  # a dry run before `infoppo data prep`; a real run refused it
    return count_prompts(data, str(flags.get("data.prompt_split", "train"))), False


def _length_and_warmup(
    chosen: Preset,
    flags: dict[str, Any],
    data: str,
    steps: int,
    overrides: dict[str, Any],
    unbuilt: UnbuiltTask | None = None,
) -> tuple[RunLength, WarmupPlan | None, list[str]]:
    """The run's length (``train.num_episodes`` set for it, unless ``--set`` gives it) and the actor's
    warm-up in RL steps as OpenRLHF's ratio (unless ``--set actor.lr_warmup_ratio`` gives it)."""
    rows, expected = _rows(data, flags, unbuilt)
    length = run_length(flags, steps, rows)
    notes = (
        [f"{data} does not exist yet: planned with the {rows} prompts data prep writes"] if expected else []
    )
    if "train.num_episodes" not in overrides:
        flags["train.num_episodes"] = length.passes
    elif int(flags["train.num_episodes"]) < length.passes and not length.filtering:
        notes.append(
            f"--set train.num_episodes={flags['train.num_episodes']} ends the run before {steps} steps"
        )
    if "actor.lr_warmup_ratio" in overrides:
        return length, None, notes
    warmup = warmup_plan(length, chosen.actor_warmup_steps)
    flags["actor.lr_warmup_ratio"] = warmup.ratio
    return length, warmup, notes


def _sequence_parallel(flags: dict[str, Any], overrides: dict[str, Any]) -> list[str]:
    """Fit the method's ring-attention group (DAPO's 8-GPU sequence-parallel pool) to the run's GPUs:
    with fewer, use the largest group that divides them, and give each GPU proportionally more tokens,
    so that a micro-batch (DAPO-FT's top-20% pool) holds as many tokens as the recipe's; returns what
    was changed."""
    wanted = int(flags.get("ds.ring_attn_size", 1))
    gpus = int(flags["actor.num_nodes"]) * int(flags["actor.num_gpus_per_node"])
    if wanted <= 1 or "ds.ring_attn_size" in overrides or gpus % wanted == 0:
        return []
    size = max(d for d in range(1, min(wanted, gpus) + 1) if gpus % d == 0)
    flags["ds.ring_attn_size"] = size
    notes = [f"ring attention over {size} GPU(s) instead of the recipe's {wanted}: this run has {gpus}"]
    if flags.get("train.dynamic_batch_enable") and "train.max_tokens_per_gpu" not in overrides:
        pool = int(flags["train.max_tokens_per_gpu"]) * wanted
        flags["train.max_tokens_per_gpu"] = -(-pool // size)  # ceil: the pool never shrinks
        notes.append(
            f"train.max_tokens_per_gpu {flags['train.max_tokens_per_gpu']:,} (the recipe's per-GPU tokens x "
            f"{wanted}/{size}), so that a micro-batch still pools {pool:,} tokens as the recipe's "
            f"{wanted}-GPU sequence-parallel group does (more activation memory per GPU)"
        )
    return notes


def _warnings(plan_steps: int, warmup: WarmupPlan | None, evaluation: EvalPlan) -> list[str]:
    found = []
    if warmup is not None and warmup.covers_run:
        found.append(
            f"the {warmup.rl_steps}-step warm-up covers the whole {plan_steps}-step run: the actor never "
            "trains at its full learning rate"
        )
    if evaluation.benches and not evaluation.before and evaluation.every > plan_steps:
        found.append(
            f"no in-training eval falls inside the run ({plan_steps} steps, eval every {evaluation.every}); "
            "only the last step is evaluated"
        )
    return found


def plan_training(
    req: TrainRequest, strict_data: bool = True, progress: BuildProgress | None = None
) -> TrainPlan:
    """Resolve ``req`` into a :class:`TrainPlan`, validated against OpenRLHF's own parser.

    Raises :class:`UsageError` (one line) for an unknown preset or method, an invalid value, a
    missing data file (with ``strict_data``), a run that could never update the model, or a
    ``--set`` that OpenRLHF would reject, and :class:`EnvironmentProblem` when the installed
    openrlhf is not the pinned version. A preset's task is built first when the cache lacks it
    (``progress`` follows the build).
    """
    require_openrlhf()  # the flags and the adapter are OpenRLHF 0.11.2's
    chosen, algo = preset(req.preset), method(req.method, req.methods_file)
    _check_values(req)
    _check_option_fits_method(req, algo)
    overrides = openrlhf_flags.parse_set_options(req.overrides)
    seed = resolve_seed(req.seed, overrides)
    out = Path(req.output_dir) if req.output_dir else RunDir.default(chosen.name, req.method, seed).path
    out = out.expanduser().resolve()
    gamma = req.gamma if req.gamma is not None else algo.all_openrlhf().get("algo.advantage.gamma")
    # a preset's task is built when not cached, but never by a dry run: it plans with the paths to be built
    req, task_notes, unbuilt = resolve_task(chosen, req, progress, gamma, build=strict_data)
    data = (
        str(unbuilt.files.train_file)
        if unbuilt and unbuilt.holds(req.data)
        else _resolve_data(req, strict_data)
    )
    device = req.device or chosen.device

    recipe = algo.all_openrlhf()
    flags: dict[str, Any] = {**recipe, **chosen.openrlhf}
    flags.update(recipe)  # the method's recipe beats the preset's generic flags (order kept)
    flags.update(chosen.method_overrides.get(algo.name, {}))
    flags.update(_derived_flags(chosen, algo, req, data, out, seed))
    flags.update(_overlong_buffer(algo, chosen))
    flags.update(_given_settings(req, carried_by_openrlhf=True))
    flags.update(tracking_flags(req, out, algo.name, overrides))
    every = req.eval_every or chosen.eval_every
    samples = req.eval_samples or chosen.eval_samples
    evaluation = eval_plan(req.eval_bench, every, samples, benches_file=req.benches_file)
    evaluation = replace(evaluation, before=req.eval_before)
    flags.update(evaluation.flags(out))
    flags.update(device_flags(device))
    flags.update(overrides)
    flags["train.seed"] = seed  # one value, whichever way it was given
    model = str(flags["actor.model_name_or_path"])
    model_problems = [] if unbuilt and unbuilt.holds(model) else _model_reachable(model, strict_data)
    check_local_data(data, str(flags["data.input_key"]), str(flags["data.label_key"]))
    check_flags(flags)
    if flags.get("train.dynamic_batch_enable") and "train.max_tokens_per_gpu" not in overrides:
        # the 80/20 recipe packs micro-batches up to max prompt + max response tokens
        # (verl ppo_max_token_len_per_gpu); OpenRLHF's equivalent is train.max_tokens_per_gpu
        flags["train.max_tokens_per_gpu"] = flags["data.max_len"]
    notes = [*task_notes, *_sequence_parallel(flags, overrides)]
    if evaluation.benches and "ckpt.best_metric_key" not in overrides:
        flags["ckpt.best_metric_key"] = BEST_METRIC
    steps = req.steps or chosen.steps
    length, warmup, length_notes = _length_and_warmup(chosen, flags, data, steps, overrides, unbuilt)
    if flags.get("train.async_enable"):
        raise UsageError("OpenRLHF's async mode (train.async_enable) is not supported by infoppo; drop it")
    params = unbuilt.parameters if unbuilt and unbuilt.holds(model) else None
    cpu_cost = check_device(device, flags, algo.uses_critic, params)

    infotime = _infotime_settings(algo, req, out, length, device)
    secret_env = openrlhf_flags.secrets_to_environment(flags, dict(os.environ))
    req = replace(req, overrides=openrlhf_flags.redact_argv(req.overrides))
    plan = TrainPlan(
        req, chosen, algo, out, data, flags, infotime, length, warmup, evaluation, secret_env=secret_env
    )
    plan.notes, plan.cpu_cost, plan.unbuilt_task = [*notes, *length_notes], cpu_cost, unbuilt
    plan.tracking_env, tracking_warnings, tracking_problems = tracking_environment(flags, out, req.wandb_mode)
    disk_warnings = disk_space_warnings(flags, algo.uses_critic, out)
    plan.warnings = [*_warnings(steps, warmup, evaluation), *disk_warnings, *tracking_warnings]
    plan.problems = [*model_problems, *tracking_problems]
    if strict_data and plan.problems:
        raise UsageError(plan.problems[0])
    openrlhf_flags.validate(plan.openrlhf_argv())
    return plan
