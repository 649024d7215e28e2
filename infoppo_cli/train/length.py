"""How long a run is, in InfoPPO's unit (RL steps), and what OpenRLHF needs to make exactly that many.

One RL step generates ``rollout.batch_size`` prompts x ``rollout.n_samples_per_prompt`` responses and
trains ``train.max_epochs`` passes of optimizer steps of ``train.batch_size`` responses over them
(``trainer/ray/ppo_actor.py::ppo_train``). OpenRLHF 0.11.2 sets no step count: its ``fit`` loop runs
``train.num_episodes`` passes over the prompts, and dynamic filtering consumes extra prompts per step
(``samples_generator.py``: each dropped group is replaced by a fresh prompt). infoppo therefore plans
enough passes for ``steps`` RL steps and stops its trainer at ``steps`` (``openrlhf_adapter/actors.py``),
and gives OpenRLHF's learning-rate schedule that run's length in optimizer steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from infoppo_cli.errors import UsageError

FILTER_HEADROOM = 10
"""Prompts planned per kept prompt under dynamic filtering: DAPO's official recipe gives up on a step
after 10 generation batches (``algorithm.filter_groups.max_num_gen_batches=10``), i.e. it trains
only while at least 1 group in 10 survives the filter."""


@dataclass(frozen=True)
class RunLength:
    """The length of a run and everything derived from it."""

    rl_steps: int
    prompts: int
    """Prompts in the training data (after ``data.max_samples``)."""
    prompts_per_step: int
    responses_per_step: int
    optimizer_steps_per_rl_step: int
    passes: int
    """``train.num_episodes``: passes over the prompts planned for ``rl_steps``."""
    filtering: bool

    @property
    def optimizer_steps(self) -> int:
        return self.rl_steps * self.optimizer_steps_per_rl_step

    @property
    def responses(self) -> int:
        """Responses trained on (dynamic filtering generates more: the dropped groups)."""
        return self.rl_steps * self.responses_per_step

    def describe_passes(self) -> str:
        used = self.rl_steps * self.prompts_per_step / self.prompts
        carry = "; a batch left short at the end of a pass is completed from the next (as verl)"
        if self.filtering:
            return (
                f"up to {self.passes} (train.num_episodes): {used:.3g} without filtering, headroom for "
                f"keeping 1 group in {FILTER_HEADROOM} (DAPO's max_num_gen_batches){carry}"
            )
        return f"{self.passes} (train.num_episodes): {used:.3g} x {self.prompts} prompts{carry}"


def check_int(flags: dict[str, Any], name: str, minimum: int = 1) -> int:
    """``flags[name]`` (a TOML integer, or a ``--set`` text) as an integer >= ``minimum``; anything
    else is a one-line :class:`UsageError`."""
    value = flags.get(name)
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().lstrip("+").isdigit():
        number = int(value)
    if number is None or number < minimum:
        raise UsageError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return number


def run_length(flags: dict[str, Any], steps: int, rows: int) -> RunLength:
    """The run of ``steps`` RL steps over ``rows`` prompts with these OpenRLHF flags.

    Refuses (one line) a run that could never update the model: no steps, or an RL step that makes
    no optimizer step (OpenRLHF's ``max_steps`` would be 0). Data of fewer prompts than one RL step is
    fine: a batch left short at the end of a pass is completed from the next (:func:`passes_for`).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise UsageError(f"--steps must be an integer >= 1, got {steps!r}")
    batch = check_int(flags, "rollout.batch_size")
    n = check_int(flags, "rollout.n_samples_per_prompt")
    train_batch = check_int(flags, "train.batch_size")
    epochs = check_int(flags, "train.max_epochs") if "train.max_epochs" in flags else 1
    prompts = min(rows, check_int(flags, "data.max_samples")) if "data.max_samples" in flags else rows
    per_step = batch * n // train_batch * epochs
    if per_step < 1:
        raise UsageError(
            f"one RL step makes {batch * n} responses, fewer than one optimizer step (train.batch_size "
            f"{train_batch}): OpenRLHF would never update the model"
        )
    filtering = bool(flags.get("algo.dynamic_filtering_enable"))
    passes = passes_for(steps, batch * (FILTER_HEADROOM if filtering else 1), prompts)
    return RunLength(steps, prompts, batch, batch * n, per_step, passes, filtering)


def passes_for(steps: int, batch: int, prompts: int) -> int:
    """Passes over ``prompts`` that fill ``steps`` batches of ``batch`` prompts (``full_batches``): a
    batch left short at the end of a pass is completed by the next pass's first draw, whose surplus is
    dropped, so each pass fills ``prompts // batch`` batches; data smaller than a batch fills one batch
    every ``ceil(batch / prompts)`` passes."""
    per_pass = prompts // batch
    return math.ceil(steps / per_pass) if per_pass else steps * math.ceil(batch / prompts)


def eval_steps(steps: int, every: int | None, before: bool) -> list[int]:
    """The steps after which the in-training eval runs: 0 (the base model) when ``before``, every
    ``every`` steps, and the last step (as verl's trainer does, ``is_last_step``)."""
    if every is None:
        return []
    points = [0] if before else []
    points += list(range(every, steps + 1, every))
    if steps not in points:
        points.append(steps)
    return points


def checkpoint_steps(steps: int, save_every: Any) -> list[int]:
    """The steps that write a checkpoint: every ``ckpt.save_steps`` and the last (verl saves there too)."""
    if isinstance(save_every, str) and save_every.strip().lstrip("+").isdigit():
        save_every = int(save_every)
    if not isinstance(save_every, int) or isinstance(save_every, bool) or save_every < 1:
        return []  # -1: OpenRLHF saves no checkpoint
    points = list(range(save_every, steps + 1, save_every))
    return points if steps in points else [*points, steps]


def describe_points(points: list[int], limit: int = 8) -> str:
    """``0, 5, 10, ..., 1050 (212 points)``: a long list shortened for the plan."""
    if not points:
        return "none"
    if len(points) <= limit:
        return ", ".join(map(str, points))
    head = ", ".join(map(str, points[: limit - 2]))
    return f"{head}, ..., {points[-1]} ({len(points)} points)"
