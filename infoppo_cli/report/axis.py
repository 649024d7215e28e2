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

from infoppo_cli.report.curves import group_runs
from infoppo_cli.report.runs import RunData
from infoppo_cli.rundir import metric_number

X_AXES = {"steps": "training step", "responses": "responses generated"}
"""``--x`` choices and their axis labels."""
COUNT_KEYS = ("responses_generated", "responses_trained")


def _responses_at(row: dict) -> float | None:
    return next((metric_number(row[key]) for key in COUNT_KEYS if key in row), None)


def _cumulative(run: RunData, notes: list[str]) -> dict[float, float] | None:
    """The run's step -> responses generated up to and including it (step 0, the base model's eval, at
    0); ``None``, with a note, for a run that did not count its responses."""
    total, at = 0.0, {}
    for row in sorted(run.steps, key=lambda r: r["step"]):
        count = _responses_at(row) if row["step"] > 0 else 0.0
        if count is None:
            notes.append(
                f"{run.name}: no responses counted at step {row['step']:g} (metrics.jsonl has no "
                f"{' or '.join(COUNT_KEYS)}): left out of the figures over responses"
            )
            return None
        total += count
        at[row["step"]] = total
    return at


def on_responses_axis(runs: Sequence[RunData], notes: list[str]) -> list[RunData]:
    """``runs`` with each row's ``step`` replaced by the responses generated up to and including it
    (the base model's eval, step 0, at 0); a run that did not count its responses is left out, with a
    note."""
    moved = []
    for run in runs:
        at = _cumulative(run, notes)
        if at is not None:
            moved.append(replace(run, steps=[{**row, "step": at[row["step"]]} for row in run.steps]))
    return moved


def on_seed_mean_responses_axis(runs: Sequence[RunData], notes: list[str]) -> list[RunData]:
    """For figures: like :func:`on_responses_axis`, but each step is placed at the mean, over the seeds of
    its grid point, of the responses generated up to it, so that seeds that generated different numbers
    of responses (dynamic sampling) stay aligned step by step and their mean and band can be drawn."""
    counted = {id(run): (run, at) for run in runs if (at := _cumulative(run, notes)) is not None}
    moved = []
    for members in group_runs([run for run, _ in counted.values()]).values():
        ats = [counted[id(member)][1] for member in members]
        shared = set.intersection(*(set(at) for at in ats))
        mean_at = {step: sum(at[step] for at in ats) / len(ats) for step in shared}
        for member in members:
            rows = [{**row, "step": mean_at[row["step"]]} for row in member.steps if row["step"] in mean_at]
            moved.append(replace(member, steps=rows))
    return moved
