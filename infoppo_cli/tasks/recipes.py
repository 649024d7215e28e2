"""The built-in tasks a preset can name (``task = "NAME"``), each one recipe.

``arithmetic`` is the tiny-cpu preset's: two-number sums answered in about 7 tokens, where information
time and token time barely differ. ``chain`` is tiny-cpu-long's: ten one-digit operations worked out
line by line in about 200 tokens (:mod:`infoppo_cli.tasks.chain`), long enough for γ^T to matter.
``chain-shortcut`` is tiny-cpu-shortcut's: the same problems, answered either worked out (long, mostly right)
or at once (short, mostly wrong), the model's choice.
"""

from __future__ import annotations

from infoppo_cli.errors import UsageError
from infoppo_cli.tasks.build import TaskRecipe
from infoppo_cli.tasks.chain import ChainSpec, ChainTeacherSpec, ShortcutTeacherSpec
from infoppo_cli.tasks.warm_start import WarmStartSpec

TASK_RECIPES: dict[str, TaskRecipe] = {
    "arithmetic": TaskRecipe(),
    "chain": TaskRecipe(
        name="chain",
        problems=ChainSpec(),
        teacher=ChainTeacherSpec(),
        warm_start=WarmStartSpec(steps=1000, clean_steps=750, warmup_steps=100, decay_steps=250),
    ),
    "chain-shortcut": TaskRecipe(
        name="chain-shortcut",
        problems=ChainSpec(),
        teacher=ShortcutTeacherSpec(),
        warm_start=WarmStartSpec(steps=1000, clean_steps=750, warmup_steps=100, decay_steps=250),
    ),
}

BUILD_MINUTES = {"arithmetic": 2, "chain": 20, "chain-shortcut": 15}
"""About how long each task's first build takes (measured on a 2-core CPU; the warm start is most of
it): what a dry run says of a task that is not built yet."""


def task_recipe(name: str) -> TaskRecipe:
    """The recipe of the built-in task ``name``; an unknown name is refused with the known ones."""
    try:
        return TASK_RECIPES[name]
    except KeyError:
        raise UsageError(f"unknown task {name!r}; choose one of: {', '.join(TASK_RECIPES)}") from None
