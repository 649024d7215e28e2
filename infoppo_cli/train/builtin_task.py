"""A preset's synthetic task (``task = "NAME"``): the model, training prompts and held-out benchmark it
builds offline, cached (``infoppo_cli/tasks``), filled into the request where the user gave none.

A real run builds the task first when the cache lacks it; a dry run never builds: it plans with the
paths the first real run builds and says so, with the build's estimated time (:class:`UnbuiltTask`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from infoppo_cli.errors import UsageError
from infoppo_cli.tasks import cached_task, ensure_task, planned_task
from infoppo_cli.tasks.recipes import BUILD_MINUTES, task_recipe
from infoppo_cli.train.presets import Preset

if TYPE_CHECKING:
    from infoppo_cli.tasks import TaskFiles, TaskRecipe

Request = TypeVar("Request")
"""``train.plan.TrainRequest`` (a dataclass with ``model``, ``data``, ``eval_bench``, ``benches_file``)."""

BuildProgress = Callable[[str, int, int], None]
"""``progress(stage, done, total)`` while a task is built (the CLI draws it)."""


@dataclass(frozen=True)
class UnbuiltTask:
    """A preset's task that a dry run found not built: where the first real run builds it, and what the
    plan needs of it meanwhile."""

    name: str
    files: TaskFiles
    prompts: int
    """Training prompts the build writes (the recipe's split; drawing it is cheap)."""
    parameters: float
    """The model's size from the recipe's shape (its tokenizer may learn a few tokens fewer)."""

    def holds(self, path: str | Path) -> bool:
        """Whether ``path`` is one of the files the build makes."""
        made = (self.files.model_dir, self.files.train_file, self.files.heldout_file)
        return Path(path).expanduser().absolute() in made


def resolve_task(
    chosen: Preset,
    req: Request,
    progress: BuildProgress | None = None,
    gamma: float | None = None,
    build: bool = True,
) -> tuple[Request, list[str], UnbuiltTask | None]:
    """``req`` with the task's model, data and held-out benchmark where it names none, the plan's notes
    on where they come from and on the horizon token time reaches at ``gamma`` (the run's γ), and, when
    ``build`` is off (a dry run) and the cache lacks the task, what the first real run will build;
    ``req`` unchanged for a preset without a task."""
    if chosen.task is None:
        return req, [], None
    try:
        recipe = task_recipe(chosen.task)
    except UsageError as exc:
        raise UsageError(f"preset {chosen.source}: {exc}") from None
    files = ensure_task(recipe, on_progress=progress) if build else cached_task(recipe)
    unbuilt = None if files is not None else _unbuilt(chosen.task, recipe, planned_task(recipe))
    files = files or unbuilt.files  # type: ignore[union-attr]
    changes: dict[str, str] = {}
    if req.model is None:
        changes["model"] = str(files.model_dir)
    if req.data is None:
        changes["data"] = str(files.train_file)
    if req.eval_bench is None:  # the held-out problems: a local benchmark, or the registry's entry
        changes["eval_bench"] = chosen.task if unbuilt else f"{chosen.task}={files.heldout_file}"
    if unbuilt is not None:
        return replace(req, **changes), [_not_built_note(unbuilt)], unbuilt
    how = f"built in {files.build_seconds:.0f} s" if files.built_now else "cached"
    note = f"task {chosen.task!r} ({how}; recipe {files.recipe_id}): {files.directory}"
    return replace(req, **changes), [note, *_horizon(files.warm_start, gamma)], None


def _unbuilt(name: str, recipe: TaskRecipe, files: TaskFiles) -> UnbuiltTask:
    train, _ = recipe.problems.split()
    return UnbuiltTask(name, files, len(train), _parameters(recipe))


def _not_built_note(task: UnbuiltTask) -> str:
    minutes = BUILD_MINUTES.get(task.name)
    took = f"about {minutes} minutes on a 2-core CPU, an estimate" if minutes else "a while"
    return (
        f"task {task.name!r} is not built yet (recipe {task.files.recipe_id}): the first real run builds "
        f"it ({took}) into {task.files.directory}; this dry run built nothing"
    )


def _parameters(recipe: TaskRecipe) -> float:
    """Qwen3's parameter count for the recipe's shape, tied embeddings (``tasks.warm_start.new_model``)."""
    spec = recipe.model
    attention = spec.hidden_size * spec.head_dim * 2 * (spec.num_attention_heads + spec.num_key_value_heads)
    layer = attention + 3 * spec.hidden_size * spec.intermediate_size + 2 * (spec.hidden_size + spec.head_dim)
    return float(spec.vocab_size * spec.hidden_size + spec.num_hidden_layers * layer + spec.hidden_size)


def _horizon(measured: dict, gamma: float | None) -> list[str]:
    """How far token time discounts the task's reference response at the run's γ, when measured."""
    tokens = measured.get("reference_tokens_mean")
    if not tokens:
        return []
    line = f"reference responses: {tokens:.0f} tokens on average"
    if gamma is not None and gamma < 1.0:
        line += f"; token time discounts them by γ^T = {gamma}^{tokens:.0f} = {gamma**tokens:.3g}"
    return [line]
