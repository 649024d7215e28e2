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
TASKS = ("arithmetic",)
"""The tasks a preset can name (``infoppo_cli/tasks``)."""


def resolve_task(
    chosen: Preset, req: Request, progress: BuildProgress | None = None
) -> tuple[Request, list[str]]:
    """``req`` with the task's model, data and held-out benchmark where it names none, and the plan's
    note on where they come from; ``req`` unchanged for a preset without a task."""
    if chosen.task is None:
        return req, []
    from infoppo_cli.errors import UsageError
    from infoppo_cli.tasks import TaskRecipe, ensure_task

    if chosen.task not in TASKS:
        raise UsageError(
            f"preset {chosen.source}: unknown task {chosen.task!r}; choose one of: {', '.join(TASKS)}"
        )
    files = ensure_task(TaskRecipe(name=chosen.task), on_progress=progress)
    changes: dict[str, str] = {}
    if req.model is None:
        changes["model"] = str(files.model_dir)
    if req.data is None:
        changes["data"] = str(files.train_file)
    if req.eval_bench is None:  # the held-out problems, registered as a local benchmark
        changes["eval_bench"] = f"{chosen.task}={files.heldout_file}"
    how = f"built in {files.build_seconds:.0f} s" if files.built_now else "cached"
    note = f"task {chosen.task!r} ({how}; recipe {files.recipe_id}): {files.directory}"
    return replace(req, **changes), [note]
