"""What a figure's legend calls a run outside a sweep: the name its user gave it (``--run-name``), else its
method and the settings that tell it apart from the other runs drawn (``infoppo γ=0.999 λ=0.99``), never
the name of the directory it happens to sit in. A sweep's runs are labelled by their grid point
(:func:`infoppo_cli.report.curves.group_label`); a run without a method (an evaluation of a base model)
keeps the model's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infoppo_cli.report.runs import RunData

SETTING_SYMBOLS = {"gamma": "γ", "lambda": "λ", "clip": "ε"}
"""Settings (as :func:`report.runs.method_settings` names them) written with their symbol."""
LEFT_OUT = frozenset({"steps"})
"""Settings never in a label: the run's length shows on the x axis."""


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _setting(key: str, value: Any) -> str:
    return f"{SETTING_SYMBOLS.get(key, key)}={_value(value)}"


def _differing(runs: Sequence[RunData]) -> list[str]:
    """The settings whose values are not the same in every run (in the order runs list them)."""
    keys = list(dict.fromkeys(key for run in runs for key in run.parameters if key not in LEFT_OUT))
    return [key for key in keys if len({_value(run.parameters.get(key)) for run in runs}) > 1]


def _model_name(model: str | None) -> str:
    return Path(model).name if model else "?"


def _method_label(run: RunData, settings: Sequence[str], with_model: bool) -> str:
    parts = [run.method or run.arm]
    parts += [_setting(key, run.parameters[key]) for key in settings if key in run.parameters]
    if with_model:
        parts.append(f"({_model_name(run.model)})")
    return " ".join(parts)


def _told_apart(labels: dict[int, str], runs: Sequence[RunData], detail: Any) -> None:
    """Add ``detail(run)`` to the labels that two or more runs share."""
    counts: dict[str, int] = {}
    for run in runs:
        counts[labels[id(run)]] = counts.get(labels[id(run)], 0) + 1
    for run in runs:
        if counts[labels[id(run)]] > 1 and (extra := detail(run)):
            labels[id(run)] += f" {extra}"


def _checkpoint(run: RunData) -> str:
    """``@global_step40`` for an evaluation of a checkpoint (:mod:`report.eval_dirs` names it so)."""
    _, at, tag = run.name.partition(" @")
    return f"@{tag}" if at else ""


def label_runs(runs: Sequence[RunData]) -> None:
    """Set ``label`` on every run outside a sweep (see the module); labels that would still be equal get
    the seed, then the checkpoint evaluated, then the run's directory added."""
    outside = [run for run in runs if run.sweep is None]
    by_method = [run for run in outside if run.method and not run.run_name]
    named = {id(run) for run in by_method}
    settings = _differing(by_method)
    with_model = len({run.model for run in by_method}) > 1
    labels: dict[int, str] = {}
    for run in outside:
        if run.run_name:
            labels[id(run)] = run.run_name
        elif id(run) in named:
            labels[id(run)] = _method_label(run, settings, with_model)
        else:
            labels[id(run)] = run.name
    _told_apart(labels, outside, lambda run: f"seed {run.seed}" if run.seed is not None else "")
    _told_apart(labels, outside, _checkpoint)
    _told_apart(labels, outside, lambda run: f"[{run.path.name}]")
    for run in outside:
        run.label = labels[id(run)]
