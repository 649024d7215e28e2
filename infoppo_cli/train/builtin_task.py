"""A preset's synthetic task (``task = "NAME"``): the model, training prompts and held-out benchmark it
builds offline, cached (``infoppo_cli/tasks``), filled into the request where the user gave none."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from infoppo_cli.train.presets import Preset

Request = TypeVar("Request")
"""``train.plan.TrainRequest`` (a dataclass with ``model``, ``data``, ``eval_bench``, ``benches_file``)."""

BuildProgress = Callable[[str, int, int], None]
"""``progress(stage, done, total)`` while a task is built (the CLI draws it)."""


def resolve_task(
    chosen: Preset, req: Request, progress: BuildProgress | None = None, gamma: float | None = None
) -> tuple[Request, list[str]]:
    """``req`` with the task's model, data and held-out benchmark where it names none, and the plan's
    notes on where they come from and on the horizon token time reaches at ``gamma`` (the run's γ);
    ``req`` unchanged for a preset without a task."""
    if chosen.task is None:
        return req, []
    from infoppo_cli.errors import UsageError
    from infoppo_cli.tasks import ensure_task
    from infoppo_cli.tasks.recipes import task_recipe

    try:
        recipe = task_recipe(chosen.task)
    except UsageError as exc:
        raise UsageError(f"preset {chosen.source}: {exc}") from None
    files = ensure_task(recipe, on_progress=progress)
    changes: dict[str, str] = {}
    if req.model is None:
        changes["model"] = str(files.model_dir)
    if req.data is None:
        changes["data"] = str(files.train_file)
    if req.eval_bench is None:  # the held-out problems, registered as a local benchmark
        changes["eval_bench"] = f"{chosen.task}={files.heldout_file}"
    how = f"built in {files.build_seconds:.0f} s" if files.built_now else "cached"
    note = f"task {chosen.task!r} ({how}; recipe {files.recipe_id}): {files.directory}"
    return replace(req, **changes), [note, *_horizon(files.warm_start, gamma)]


def _horizon(measured: dict, gamma: float | None) -> list[str]:
    """How far token time discounts the task's reference response at the run's γ, when measured."""
    tokens = measured.get("reference_tokens_mean")
    if not tokens:
        return []
    line = f"reference responses: {tokens:.0f} tokens on average"
    if gamma is not None and gamma < 1.0:
        line += f"; token time discounts them by γ^T = {gamma}^{tokens:.0f} = {gamma**tokens:.3g}"
    return [line]
