"""``metrics.jsonl``: one JSON line per training step, with InfoPPO's diagnostics under fixed names.

The file's format and its writer are :mod:`infoppo_cli.rundir`'s (its schema, and
:class:`~infoppo_cli.rundir.MetricsWriter`: a non-finite value, a step that diverged, is kept as the text
``"NaN"``, ``"Infinity"`` or ``"-Infinity"``). The trainer appends each line to the run's append-only log
(:mod:`infoppo_cli.records.jsonl`: fsynced, a torn last line from a crash cut off first), so a crash
loses at most the step in flight. A resumed run marks where it goes on from (:meth:`TrainMetricsLog.resumed`),
so that readers drop the lines of steps it trains again.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from infoppo_cli.rundir import MetricsWriter, read_metrics

STEP_METRICS: dict[str, tuple[str, ...]] = {
    # before DAPO's dynamic filtering (step_metrics.RolloutRecorder); OpenRLHF's own is after it
    "reward_mean": ("rollout/reward_mean_unfiltered", "rollout/reward_mean"),
    "reward_mean_kept": ("rollout/reward_mean",),
    "kept_group_frac": ("rollout/kept_group_frac",),
    "grade_timeout_frac": ("rollout/grade_timeout_frac",),
    "response_length_mean": ("rollout/response_length_mean",),
    "entropy_mean": ("entropy_mean",),
    "rho_mean": ("rho_mean",),
    "info_discount_mean": ("info_discount_mean",),
    "token_discount_mean": ("token_discount_mean",),
    "clip_upper_mean": ("clip_upper_mean",),
    "clip_lower_mean": ("clip_lower_mean",),
    "clip_frac_upper": ("clip_frac_upper",),
    "clip_frac_lower": ("clip_frac_lower",),
    "policy_loss": ("policy_loss",),
    "critic_loss": ("critic_loss",),
    # DAPO-FT: the share of response tokens whose policy-gradient term is kept (policy_loss.py)
    "grad_token_frac": ("high_entropy_token_frac",),
    # DeepSpeed's global norm before clipping at the run's actor.max_norm, of the step's last update
    "grad_norm": ("actor_grad_norm",),
}
"""Our metric name -> the keys of OpenRLHF's per-step status dict that give it, first found wins
(infoppo's per-sample keys arrive through ``experience.info``)."""

UPSTREAM_MISLEADING = ("dynamic_filtering_pass_rate",)
"""OpenRLHF status keys left out of the record because their value is not what their name says:
0.11.2's ``dynamic_filtering_pass_rate`` divides the responses kept by the *prompts* consumed
(``samples_generator.py``), so a step that keeps every group reads n_samples_per_prompt × 100%.
``kept_group_frac`` is the share of groups kept."""

OPTIMIZER_STEPS = "optimizer_steps"
"""The actor's optimizer steps so far, read from its DeepSpeed engine (``global_steps``) after the step."""
RESPONSES_TRAINED = "responses_trained"
PROMPTS_TRAINED = "prompts_trained"
"""Responses (and their prompts) the step trained on: after dynamic filtering, a full batch."""

BENCHMARK_MEAN = "eval_mean_accuracy_pct"
"""The mean over the in-training benchmarks of their accuracy in percent (``eval_<bench>``, whatever the
method's reward values), added by the trainer to each eval's logs: the best checkpoint is chosen on it
(the plan sets ``ckpt.best_metric_key``). Not a benchmark: reports do not draw it as one. Runs before it
logged ``eval_mean_over_benches``, the mean *reward*."""


def metric_number(value: Any) -> float | None:
    """A metric's value as a float (non-finite ones included: a diverged step is data), or ``None``
    for what is not a number."""
    if hasattr(value, "item") and getattr(value, "numel", lambda: 1)() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def step_record(
    step: int, status: dict[str, Any], fixed_clip: tuple[float, float] | None = None
) -> dict[str, Any]:
    """The metrics line for one step from OpenRLHF's status dict.

    ``fixed_clip`` (eps_low, eps_high) fills the bound columns for methods with constant bounds,
    so curves of PPO and InfoPPO can share a plot.
    """
    record: dict[str, Any] = {"step": step}
    for ours, candidates in STEP_METRICS.items():
        found = (metric_number(status.get(key)) for key in candidates)
        value = next((number for number in found if number is not None), None)
        if value is not None:
            record[ours] = value
    if fixed_clip is not None and "clip_upper_mean" not in record:
        record["clip_lower_mean"] = 1.0 - fixed_clip[0]
        record["clip_upper_mean"] = 1.0 + fixed_clip[1]
    used = {key for candidates in STEP_METRICS.values() for key in candidates}
    for key, value in status.items():
        number = metric_number(value)
        if key not in used and key not in UPSTREAM_MISLEADING and number is not None:
            record[key] = number
    return record


_UPSTREAM_EVAL = re.compile(r"^eval_(?P<bench>.+)_pass(?P<k>\d+)$")
"""OpenRLHF's reward-valued eval keys: ``eval_<bench>_pass1`` (the mean reward over a problem's k
samples, averaged over problems) and ``eval_<bench>_pass<k>`` (the best of the k rewards, averaged)."""
REWARD_MEAN_SUFFIX = "_reward_mean"
"""``eval_<bench>_reward_mean``: the mean reward of the bench's samples (OpenRLHF's ``_pass1``)."""
LEGACY_REWARD_MEAN_SUFFIX = "_pass1"
"""The name runs before the renaming logged the mean reward under (OpenRLHF's), still read."""


def pass_at_k_key(bench: str, k: int) -> str:
    """``eval_<bench>_pass_at_<k>_pct``: the share of problems with a correct answer among k samples."""
    return f"eval_{bench}_pass_at_{k}_pct"


def eval_fields(logs: dict[str, Any], reward_values: tuple[float, float]) -> dict[str, float]:
    """OpenRLHF's in-training eval logs under names that say what they hold (numbers only).

    ``eval_<bench>_pass1`` is the mean reward over the k samples of each problem, averaged over problems:
    it becomes ``eval_<bench>_reward_mean`` and, with ``reward_values`` = (correct, otherwise),
    ``eval_<bench>`` = Mean@k accuracy in percent, ``100 * (mean - otherwise) / (correct - otherwise)``
    (``(mean + 1) / 2`` for +1/-1 rewards). ``eval_<bench>_pass<k>`` averages the best reward of the k
    samples: made an accuracy the same way, it is pass@k in percent (:func:`pass_at_k_key`). Other keys
    keep their names; names already translated are left as they are.
    """
    correct, otherwise = reward_values
    fields: dict[str, float] = {}
    for key, value in logs.items():
        number = metric_number(value)
        if number is None:
            continue
        match = _UPSTREAM_EVAL.match(key)
        if match is None:
            fields[key] = number
            continue
        bench, k = match.group("bench"), int(match.group("k"))
        accuracy = 100.0 * (number - otherwise) / (correct - otherwise)
        if k == 1:
            fields[f"eval_{bench}{REWARD_MEAN_SUFFIX}"] = number
            fields[f"eval_{bench}"] = accuracy
        else:
            fields[pass_at_k_key(bench, k)] = accuracy
    return fields


def bench_accuracies(fields: dict[str, Any]) -> dict[str, float]:
    """Benchmark -> Mean@k accuracy in percent, from an eval's fields (:func:`eval_fields`, or a line of
    ``metrics.jsonl``, old names included): ``eval_<bench>`` logged beside its mean reward."""
    found = {}
    for key in fields:
        for suffix in (REWARD_MEAN_SUFFIX, LEGACY_REWARD_MEAN_SUFFIX):
            bench = key.removeprefix("eval_").removesuffix(suffix)
            if key.startswith("eval_") and key.endswith(suffix) and f"eval_{bench}" in fields:
                found[bench] = fields[f"eval_{bench}"]
    return found


def eval_record(logs: dict[str, Any], reward_values: tuple[float, float]) -> dict[str, float]:
    """:func:`eval_fields` plus :data:`BENCHMARK_MEAN`, the mean over benchmarks of their accuracy."""
    fields = eval_fields(logs, reward_values)
    accuracies = list(bench_accuracies(fields).values())
    if accuracies:
        fields[BENCHMARK_MEAN] = sum(accuracies) / len(accuracies)
    return fields


class TrainMetricsLog:
    """Appends a line to ``path`` for each step as it is trained and one for each eval as it ends (the
    reader merges the lines of a step). A step's line is not held for its eval: a run stopped during
    that eval lost the step's training record, which its checkpoint holds and a resume does not retrain."""

    def __init__(self, path: str | os.PathLike[str] | None, reward_values: tuple[float, float]) -> None:
        self.path = Path(path) if path else None
        self.reward_values = reward_values
        self._log = MetricsWriter(self.path) if self.path else None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def record_step(self, record: dict[str, Any]) -> None:
        self._append(record)

    def record_eval(self, step: int, logs: dict[str, Any]) -> None:
        self._append({"step": step, **eval_fields(logs, self.reward_values)})

    def _append(self, record: dict[str, Any]) -> None:
        if self._log is not None:
            self._log.append(record)

    def resumed(self, step: int) -> None:
        """This run goes on from its checkpoint of ``step`` (0: from the start) in a file an earlier
        attempt wrote: the lines of later steps are of weights it no longer has (:data:`RESUMED_AT`)."""
        if self._log is not None and self.path is not None and self.path.exists():
            self._log.mark_resumed(step)

    def evaluated_steps(self) -> set[int]:
        """The steps whose eval is in the file already (a resumed run evaluates the missing ones)."""
        if self.path is None or not self.path.exists():
            return set()

        records = read_metrics(self.path)
        return {int(r["step"]) for r in records if any(key.startswith("eval_") for key in r)}
