"""The x axis of the figures over training: RL steps (the default), or responses generated.

Methods differ in what one RL step costs: DAPO's recipe generates 16 times as many responses per step
as PPO and InfoPPO (512 prompts x 16 against 64 x 8 in the GPU presets), and its dynamic sampling
generates more again for the groups it drops. ``infoppo report --x responses`` therefore draws every
curve against the responses generated up to each step, read from the run's own ``metrics.jsonl``
(``responses_generated`` per step, dropped groups included; ``responses_trained`` for a run that
logged only that), so that methods share a compute axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from infoppo_cli.report.runs import RunData
from infoppo_cli.rundir import metric_number

X_AXES = {"steps": "training step", "responses": "responses generated"}
"""``--x`` choices and their axis labels."""
COUNT_KEYS = ("responses_generated", "responses_trained")


def _responses_at(row: dict) -> float | None:
    return next((metric_number(row[key]) for key in COUNT_KEYS if key in row), None)


def on_responses_axis(runs: Sequence[RunData], notes: list[str]) -> list[RunData]:
    """``runs`` with each row's ``step`` replaced by the responses generated up to and including it
    (the base model's eval, step 0, at 0); a run that did not count its responses is left out, with a
    note."""
    moved = []
    for run in runs:
        total, rows = 0.0, []
        for row in sorted(run.steps, key=lambda r: r["step"]):
            count = _responses_at(row) if row["step"] > 0 else 0.0
            if count is None:
                notes.append(
                    f"{run.name}: no responses counted at step {row['step']:g} (metrics.jsonl has no "
                    f"{' or '.join(COUNT_KEYS)}): left out of the figures over responses"
                )
                break
            total += count
            rows.append({**row, "step": total})
        else:
            moved.append(replace(run, steps=rows))
    return moved
