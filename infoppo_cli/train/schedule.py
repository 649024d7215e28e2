"""The learning-rate schedule in InfoPPO's units (RL steps), converted to OpenRLHF's.

InfoPPO's setup: actor lr 1e-6 with a 10-step warm-up, critic 2e-6 without warm-up, no decay mentioned.
DAPO's official recipe (verl) is the same shape: a constant lr after ``lr_warmup_steps = 10``, and
verl steps its scheduler once per training step (``update_actor``), so those are RL steps too.
OpenRLHF 0.11.2 instead steps its scheduler once per *optimizer* step and takes the warm-up as a
ratio of the schedule's length ``max_steps`` (``utils/deepspeed/deepspeed.py`` warms up for
``ceil(max_steps * ratio)`` steps). infoppo's trainer reports the planned run's optimizer steps as
``max_steps`` (``train/length.py``), and this module turns RL steps into that ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from infoppo_cli.data import hub
from infoppo_cli.errors import UsageError
from infoppo_cli.train.length import RunLength

ACTOR_SCHEDULER = "constant_with_warmup"  # InfoPPO's setup (no decay) and DAPO's official constant schedule
CRITIC_SCHEDULER = "constant"  # InfoPPO's setup: no critic warm-up, no decay


@dataclass(frozen=True)
class WarmupPlan:
    """The actor's warm-up in RL steps and in OpenRLHF's optimizer steps, over a run of known length."""

    rl_steps: int
    optimizer_steps_per_rl_step: int
    total_optimizer_steps: int
    ratio: float

    @property
    def optimizer_steps(self) -> int:
        """Warm-up optimizer steps as OpenRLHF will count them: ``ceil(total * ratio)``."""
        return math.ceil(self.total_optimizer_steps * self.ratio)

    @property
    def covers_run(self) -> bool:
        """Whether the run ends before (or as) the warm-up does: it never trains at the full lr."""
        return self.optimizer_steps >= self.total_optimizer_steps

    def describe(self) -> str:
        """One line for the plan."""
        return (
            f"{self.rl_steps} RL steps = {self.optimizer_steps} optimizer steps "
            f"(ratio {self.ratio:.6g} of the run's {self.total_optimizer_steps} optimizer steps)"
        )


def _hub_rows(dataset_id: str, split: str) -> int:
    """Rows of a Hugging Face dataset's split from its metadata (needs the Hub; no download)."""
    offline = hub.hub_unavailable()  # without network: the cache only, at once (no retries)
    try:
        from datasets import load_dataset_builder  # lazy: heavy, kept off planning

        splits = load_dataset_builder(dataset_id).info.splits or {}
        return int(splits[split].num_examples)
    except Exception as exc:  # offline, unknown id, or no split metadata: all mean "cannot count"
        reason = f"not cached, and the Hub cannot be used: {offline}" if offline else type(exc).__name__
        raise UsageError(
            f"cannot count the prompts of Hugging Face dataset {dataset_id!r} (split {split!r}) to set "
            f"the 10-step warm-up ({reason}); pass a local JSONL/parquet file from "
            "`infoppo data prep`, or --set actor.lr_warmup_ratio=RATIO"
        ) from None


def count_prompts(data: str, split: str = "train") -> int:
    """Rows in a local JSONL/parquet prompt file, or in a Hub dataset's split (via ``datasets``)."""
    path = Path(data)
    if path.suffix == ".jsonl":
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # lazy: heavy, kept off planning

        return pq.ParquetFile(path).metadata.num_rows
    if path.exists():
        raise UsageError(f"data file {data} must be .jsonl or .parquet")
    return _hub_rows(data, split)


def warmup_plan(length: RunLength, rl_steps: int) -> WarmupPlan:
    """The warm-up ratio that makes OpenRLHF warm up for ``rl_steps`` RL steps of a run of
    ``length`` (whose schedule is ``length.optimizer_steps`` long: the trainer reports that as its
    ``max_steps``, ``openrlhf_adapter/actors.py``)."""
    per_rl_step, total = length.optimizer_steps_per_rl_step, length.optimizer_steps
    wanted = min(rl_steps * per_rl_step, total)
    ratio = wanted / total
    while math.ceil(total * ratio) > wanted:  # float rounding must not add a warm-up step
        ratio = math.nextafter(ratio, 0.0)
    return WarmupPlan(rl_steps, per_rl_step, total, ratio)
