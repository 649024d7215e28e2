"""The base model of a plan as its run's manifest names it (a Hub id and its revision, the model a
preset's task built, or a local directory: ``rundir/base_model.py``). The manifest keeps it at every
launch for the model card, with the ``infoppo`` command as typed and each ``--resume``
(``rundir.manifest.launch_fields``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infoppo_cli.rundir.base_model import hub_record
from infoppo_cli.tasks.cache import cache_root
from infoppo_cli.train.plan import TrainPlan


def _task_model(plan: TrainPlan, model: str) -> dict[str, Any] | None:
    """The base model of a preset's task (built in infoppo's cache), or ``None`` for another model."""
    if plan.preset.task is None:
        return None
    tasks = (cache_root() / "tasks").expanduser().resolve()
    path = Path(model).expanduser().resolve()
    if not path.is_relative_to(tasks):
        return None
    recipe = path.relative_to(tasks).parts[0]
    return {"task": plan.preset.task, "preset": plan.preset.name, "recipe": recipe, "path": model}


def base_model_record(plan: TrainPlan) -> dict[str, Any]:
    """The manifest's ``base_model`` of ``plan`` (see the module)."""
    model = str(plan.flags["actor.model_name_or_path"])
    return _task_model(plan, model) or hub_record(model)
