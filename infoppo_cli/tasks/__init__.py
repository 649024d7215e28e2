"""Small tasks built offline and cached: a synthetic arithmetic task in DAPO-Math-17K's format and a
tiny Qwen3 model warm-started on it, for training runs that must fit on a laptop's CPU.

``ensure_task()`` returns a verified :class:`TaskFiles` (model directory, training prompts, held-out
benchmark file), building it first when the cache has no good copy of its recipe.
"""

from infoppo_cli.tasks.build import TaskRecipe
from infoppo_cli.tasks.cache import (
    TaskFiles,
    cache_root,
    cached_task,
    ensure_task,
    planned_task,
    task_dir,
    verify_task,
)

__all__ = [
    "TaskFiles",
    "TaskRecipe",
    "cache_root",
    "cached_task",
    "ensure_task",
    "planned_task",
    "task_dir",
    "verify_task",
]
