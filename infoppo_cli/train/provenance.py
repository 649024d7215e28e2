"""How a run came to be, kept in its manifest at every launch for its model card: the ``infoppo``
command as the user typed it (the first launch's; secrets redacted by the command line), each
``--resume`` with its own command and the settings it changed, and the base model (a Hub id and its
revision, the model a preset's task built, or a local directory: ``rundir/base_model.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infoppo_cli.rundir import Manifest
from infoppo_cli.rundir.base_model import hub_record
from infoppo_cli.train.plan import TrainPlan


def _task_model(plan: TrainPlan, model: str) -> dict[str, Any] | None:
    """The base model of a preset's task (built in infoppo's cache), or ``None`` for another model."""
    from infoppo_cli.tasks.cache import cache_root

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


def launch_record(
    plan: TrainPlan, previous: Manifest | None, started: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """The manifest's ``infoppo_command``, ``resumes`` and ``base_model`` for a launch of ``plan`` at
    ``started``: a resume of ``previous`` keeps its first command and its history, adding itself."""
    record: dict[str, Any] = {}
    history = list(previous.record.get("resumes") or []) if previous else []
    if previous is not None:
        entry: dict[str, Any] = {"time": started, "overrides": changes}
        if plan.typed_command:
            entry["command"] = plan.typed_command
        history.append(entry)
        record["resumes"] = history
    first = previous.record.get("infoppo_command") if previous is not None else plan.typed_command
    if first:
        record["infoppo_command"] = first
    base = base_model_record(plan)
    kept = previous.record.get("base_model") if previous is not None else None
    if isinstance(kept, dict) and kept.get("hub_id") == base.get("hub_id") and kept.get("revision"):
        base = kept  # the revision the run started from
    record["base_model"] = base
    return record
