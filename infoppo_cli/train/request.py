"""What ``infoppo train`` is asked to do, declared once.

Each field of :class:`TrainRequest` carries its command-line declaration (``infoppo_cli.schema.option``):
``infoppo_cli.cli.options`` builds ``infoppo train``'s options and ``--help`` from it, a sweep builds a
request per run from the same fields (records it in ``sweep.json`` as those fields, and launches it as
:func:`train_argv` writes it, with ``schema.command_line``), and ``--replay``
rebuilds one from a run's manifest. The method settings are :data:`METHOD_SETTINGS`, derived from their
declarations (``components.SETTINGS``). Defaults that belong to a preset or a method (gamma, lambda, the
clip's epsilons, the normalisation, the RL steps, ...) are ``None`` here, "the preset's" or "the
method's": ``presets/*.toml`` and ``presets/methods.toml`` hold them (``infoppo presets`` lists them).
This module stays light: the command line imports it to build its options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, make_dataclass
from typing import Any, Literal

from infoppo_cli.components import SETTINGS
from infoppo_cli.errors import UsageError
from infoppo_cli.hyperparameters import Setting
from infoppo_cli.rundir import DEFAULT_RUN_DIR_TEXT
from infoppo_cli.schema import (
    AT_LEAST_ONE,
    SAMPLES_PER_PROBLEM,
    SEEDS,
    Limits,
    benches_file_option,
    check_options,
    command_line,
    methods_file_option,
    option,
)
from infoppo_cli.train.eval_set import DEFAULT_BENCHES, DEFAULT_EVERY, DEFAULT_SAMPLES

DEFAULT_DATA = "data/dapo-math-17k.jsonl"
PREPARE_DATA = "`infoppo data prep dapo-math-17k`"
"""The command that writes ``DEFAULT_DATA``."""
DEFAULT_METHOD = "infoppo"
DEFAULT_SEED = 42
_METHODS = "the method's; see `infoppo presets`"
WANDB_MODE_CHOICES = Literal["online", "offline", "disabled"]
"""``train.tracking.WANDB_MODES`` as a command-line choice."""
DEFAULT_WANDB_PROJECT = "infoppo"
"""``train.tracking``'s default project (this module stays light: the command line imports it)."""
TRACKING_FIELDS = ("wandb_project", "wandb_group", "run_name", "wandb_mode")
"""The request fields that name a run in wandb and TensorBoard: not part of what the run computes."""
COMMAND = ("infoppo", "train")
MAX_RL_STEPS = 1_000_000
RL_STEPS = Limits(1, MAX_RL_STEPS, f"infoppo plans runs of at most {MAX_RL_STEPS:,} RL steps")
"""A run's RL steps and its eval interval (``--steps``, ``--eval-every``, a preset's ``steps`` and
``eval_every``): the GPU presets run 1,050; a million is years of GPU time, and more is a typo."""


METHOD_SETTINGS: tuple[Setting, ...] = tuple(setting for setting in SETTINGS.values() if setting.options)
"""The method settings the command line gives (``components.SETTINGS``): each a request field, under its
own name and option."""


@dataclass
class _RunOptions:
    """What a run trains: its preset, method, model, data and directory."""

    preset: str = option(
        MISSING, "Model preset (see `infoppo presets`) or a preset file FILE.toml.", "--preset", "-p"
    )
    method: str = option(
        DEFAULT_METHOD, "Training method (see `infoppo presets`), or one of --methods-file's."
    )
    methods_file: str | None = methods_file_option()
    model: str | None = option(
        None, "Another model (HF id or path) with the preset's settings.", default_text="the preset's"
    )
    data: str | None = option(
        None,
        "Prompt JSONL from `infoppo data prep`.",
        default_text=f"{DEFAULT_DATA}, or the preset's task",
    )
    output_dir: str | None = option(None, "Run directory.", default_text=DEFAULT_RUN_DIR_TEXT)


def _setting_field(setting: Setting) -> tuple[str, Any, Any]:
    """A method setting as a request field: its option, ``None`` (the method's) unless given."""
    cli_type = Literal[setting.choices] if setting.choices else None
    declared = option(None, setting.help, *setting.options, default_text=_METHODS, cli_type=cli_type)
    return setting.name, setting.kind | None, declared


_MethodSettings = make_dataclass(
    "_MethodSettings",
    [_setting_field(setting) for setting in METHOD_SETTINGS],
    bases=(_RunOptions,),
    namespace={"__module__": __name__, "__doc__": "The method settings of a request (``METHOD_SETTINGS``)."},
)


@dataclass
class TrainRequest(_MethodSettings):
    """What the user asked for on the command line (``None`` means: the preset's or the method's): the
    run's options, each method setting (derived from its declaration, :data:`METHOD_SETTINGS`), and how
    it runs."""

    seed: int | None = option(
        None,
        "Random seed, 0 to 2**32 - 1: OpenRLHF's --train.seed.",
        default_text=f"--set train.seed if given, else {DEFAULT_SEED}",
        limits=SEEDS,
    )
    address: str | None = option(
        None, "Join this Ray cluster instead of starting a local Ray.", default_text=""
    )
    nodes: int | None = option(None, "Nodes to train on.", default_text="the preset's", limits=AT_LEAST_ONE)
    gpus_per_node: int | None = option(
        None, "GPUs per node.", default_text="the preset's", limits=AT_LEAST_ONE
    )
    resume: bool = option(False, "Continue the run in --output-dir from its checkpoint.", "--resume")
    resume_overrides: list[str] = option(
        None,
        "With --resume: a run setting (method, data, gamma, lambda, actor_lr, ...) that may differ from "
        "the run's; repeat for several. Every change is recorded in the manifest.",
        "--resume-override",
        default_text="none: the run's settings must be kept",
        default_factory=list,
    )
    overrides: list[str] = option(
        None,
        "Any OpenRLHF flag, KEY=VALUE with OpenRLHF's dotted name (repeatable): --set rollout.batch_size=32",
        "--set",
        default_factory=list,
    )
    eval_bench: str | None = option(
        None,
        "In-training eval benchmarks; NAME=FILE for a local copy, none: off.",
        default_text=f"{','.join(DEFAULT_BENCHES)}, or the preset's task",
    )
    """In-training eval (``train/eval_set.py``): None = AIME24 and AIME25; ``none`` switches it off."""
    eval_every: int | None = option(
        None,
        "Evaluate every N RL steps (--eval-bench none: no eval).",
        default_text=f"the preset's eval_every, {DEFAULT_EVERY}",
        limits=RL_STEPS,
    )
    eval_samples: int | None = option(
        None,
        f"Samples per problem: Mean@k, 1 to {SAMPLES_PER_PROBLEM.most:,} (as eval's --samples).",
        default_text=str(DEFAULT_SAMPLES),
        limits=SAMPLES_PER_PROBLEM,
    )
    steps: int | None = option(
        None,
        f"RL steps of the run, 1 to {MAX_RL_STEPS:,}.",
        default_text="the preset's, the same for every method",
        limits=RL_STEPS,
    )
    eval_before: bool = option(
        True,
        "Evaluate the base model before the first update (step 0), as the reference scripts do.",
        "--eval-before/--no-eval-before",
        default_text="--eval-before",
    )
    device: str | None = option(
        None,
        "cuda (vLLM + DeepSpeed on GPUs) or cpu (DeepSpeed on the CPU, a CPU rollout engine; tiny models).",
        default_text="the preset's",
    )
    benches_file: str | None = benches_file_option()
    keep_ray_logs: bool = option(
        False,
        "Keep the embedded Ray's session folder (its logs) in the run directory's ray-logs/ after the "
        "run; by default it is private to the run and removed when the run ends.",
        "--keep-ray-logs",
    )
    wandb_project: str | None = option(
        None, "Weights & Biases project of the run.", default_text=DEFAULT_WANDB_PROJECT
    )
    wandb_group: str | None = option(
        None, "Weights & Biases group of the run.", default_text="none; a sweep's name for its runs"
    )
    run_name: str | None = option(
        None,
        "The run's name in wandb and TensorBoard (its logs go to RUN/tensorboard/NAME).",
        default_text="the run directory's name with the method; a sweep's grid point",
    )
    wandb_mode: str | None = option(
        None,
        "online (needs a key: $WANDB_API_KEY or `wandb login`), offline (no account or network; "
        "`wandb sync` uploads it later) or disabled.",
        default_text="online with $WANDB_API_KEY (offline when wandb's server does not answer), else off",
        cli_type=WANDB_MODE_CHOICES,
    )

    def __post_init__(self) -> None:
        check_options(self)  # before any work: each option's declared limits and choices, no empty text
        for setting in METHOD_SETTINGS:
            try:
                setting.check(getattr(self, setting.name), setting.options[0])
            except ValueError as exc:
                raise UsageError(str(exc)) from None


def train_argv(request: TrainRequest) -> list[str]:
    """``infoppo train ...`` that asks for ``request`` (``schema.command_line``; a sweep's run, when it is
    launched); `infoppo train` parses it back into ``request``."""
    return command_line(COMMAND, request)


def recorded_request(fields: Mapping[str, Any], what: str) -> TrainRequest:
    """The request recorded as ``fields`` (a sweep's ``sweep.json``), checked as a typed one is; a key
    that is no train option, or a refused value, is one :class:`UsageError` that starts with ``what``."""
    known = {field.name for field in dataclasses.fields(TrainRequest)}
    unknown = [key for key in fields if key not in known]
    try:
        if unknown:
            raise UsageError(f"{unknown[0]!r} is not an option of infoppo train")
        return TrainRequest(**fields)
    except (UsageError, TypeError) as exc:
        raise UsageError(f"{what}: {exc}") from None
