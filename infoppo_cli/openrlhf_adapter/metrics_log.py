"""``metrics.jsonl``: one JSON line per training step, with the paper's diagnostics under fixed names.

The trainer appends each line and fsyncs it, so a crash loses at most the step in flight. After a
``--resume`` from an earlier checkpoint a step can appear twice; readers let later lines win
(:func:`read_metrics` does).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

STEP_METRICS: dict[str, str] = {
    "reward_mean": "rollout/reward_mean",
    "response_length_mean": "rollout/response_length_mean",
    "entropy_mean": "entropy_mean",
    "rho_mean": "rho_mean",
    "info_discount_mean": "info_discount_mean",
    "clip_upper_mean": "clip_upper_mean",
    "clip_lower_mean": "clip_lower_mean",
    "clip_frac_upper": "clip_frac_upper",
    "clip_frac_lower": "clip_frac_lower",
    "policy_loss": "policy_loss",
    "critic_loss": "critic_loss",
}
"""Our metric name -> the key of OpenRLHF's per-step status dict (infoppo's keys arrive via ``info``)."""


def _number(value: Any) -> float | None:
    if hasattr(value, "item") and getattr(value, "numel", lambda: 1)() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def step_record(
    step: int, status: dict[str, Any], fixed_clip: tuple[float, float] | None = None
) -> dict[str, Any]:
    """The metrics line for one step from OpenRLHF's status dict.

    ``fixed_clip`` (eps_low, eps_high) fills the bound columns for methods with constant bounds,
    so curves of PPO and InfoPPO can share a plot.
    """
    record: dict[str, Any] = {"step": step}
    for ours, theirs in STEP_METRICS.items():
        value = _number(status.get(theirs))
        if value is not None:
            record[ours] = value
    if fixed_clip is not None and "clip_upper_mean" not in record:
        record["clip_lower_mean"] = 1.0 - fixed_clip[0]
        record["clip_upper_mean"] = 1.0 + fixed_clip[1]
    used = set(STEP_METRICS.values())
    for key, value in status.items():
        number = _number(value)
        if key not in used and number is not None:
            record[key] = number
    return record


def eval_fields(logs: dict[str, Any]) -> dict[str, float]:
    """OpenRLHF's in-training eval logs, plus ``eval_<bench>`` = mean accuracy in percent."""
    fields: dict[str, float] = {}
    for key, value in logs.items():
        number = _number(value)
        if number is None:
            continue
        fields[key] = number
        if key.startswith("eval_") and key.endswith("_pass1"):
            fields[key.removesuffix("_pass1")] = 100.0 * number
    return fields


class TrainMetricsLog:
    """Appends step records to ``path``; a step whose eval is still to come is held until it arrives."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path else None
        self._held: dict[str, Any] | None = None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def record_step(self, record: dict[str, Any], eval_follows: bool) -> None:
        """Write ``record`` now, or hold it for :meth:`record_eval` of the same step."""
        self.flush()
        self._held = record
        if not eval_follows:
            self.flush()

    def record_eval(self, step: int, logs: dict[str, Any]) -> None:
        """Merge the eval results of ``step`` into its held record (or write them alone)."""
        if self._held is None or self._held["step"] != step:
            self.flush()
            self._held = {"step": step}
        self._held.update(eval_fields(logs))
        self.flush()

    def flush(self) -> None:
        """Write the held record, if any."""
        if self._held is None:
            return
        record, self._held = self._held, None
        if self.path is None:
            return
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a ``metrics.jsonl``, one per step sorted by step; for a repeated step, later
    lines win field by field. Malformed lines (a torn last line after a crash) are skipped."""
    return read_metrics_counting(path)[0]


def read_metrics_counting(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], int]:
    """:func:`read_metrics`, plus how many non-blank lines were malformed and skipped."""
    by_step: dict[int, dict[str, Any]] = {}
    malformed = 0
    with Path(path).open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                malformed += 1
                continue
            if not isinstance(record, dict) or not isinstance(record.get("step"), int):
                malformed += 1
                continue
            by_step[record["step"]] = {**by_step.get(record["step"], {}), **record}
    return [by_step[step] for step in sorted(by_step)], malformed
