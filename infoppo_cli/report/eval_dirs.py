"""Naming an ``infoppo eval`` output directory in a report: which model it evaluated, and for a model of an
``infoppo train`` run, that run's name, method and seed.

An eval directory's own name says little (``RUN/eval`` is called ``eval``, ``evals/<model>`` carries a slug),
so rows are named from what the evaluation recorded: ``settings.model`` in ``metrics.json`` (or
``eval_config.json`` beside it), and the manifest of the run that model belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.settings import read_config
from infoppo_cli.rundir import EVAL_DIR, FINAL_DIR, RunDir, read_manifest, run_of_model


@dataclass(frozen=True)
class EvalIdentity:
    """What a report row of an eval directory is called and what it compares."""

    name: str
    model: str | None = None
    """The base model a trained run started from, else the model evaluated (a Hub id or a path)."""
    method: str | None = None
    seed: int | None = None


def _settings(path: Path, document: dict[str, Any]) -> dict[str, Any]:
    settings = document.get("settings")
    if isinstance(settings, dict):
        return settings
    try:  # an older metrics.json without settings: the eval's saved settings
        config = read_config(path)
    except UsageError:
        return {}
    return config["settings"] if config is not None else {}


def _owner(path: Path, model: str | None) -> RunDir | None:
    """The training run this evaluation belongs to: the directory holding ``RUN/eval``, else the run of
    the evaluated model (``RUN/final`` or ``RUN/ckpt/<tag>``)."""
    if path.name == EVAL_DIR and RunDir(path.parent).is_run():
        return RunDir(path.parent)
    return run_of_model(model) if model else None


def _model_name(model: str) -> str:
    """A Hub id as it is; a local model by its directory's name (its parent's for a ``final/``)."""
    local = Path(model).expanduser()
    if not (local.is_absolute() or local.exists()):
        return model
    return local.parent.name if local.name == FINAL_DIR and local.parent.name else local.name


def eval_identity(path: Path, document: dict[str, Any], notes: list[str] | None = None) -> EvalIdentity:
    """Name the eval directory ``path`` whose ``metrics.json`` is ``document``. A malformed manifest of
    the evaluated run is the manifest reader's error, or with ``notes`` a warning there."""
    settings = _settings(path, document)
    model = settings.get("model") or document.get("model")
    model = model if isinstance(model, str) and model else None
    owner = _owner(path, model)
    if owner is not None:
        return _run_identity(owner, model, notes)
    if model is not None:
        return EvalIdentity(_model_name(model), model=model)
    responses = settings.get("responses")
    if isinstance(responses, str) and responses:
        return EvalIdentity(f"responses {Path(responses).stem}")
    return EvalIdentity(path.name)


def _run_identity(owner: RunDir, model: str | None, notes: list[str] | None) -> EvalIdentity:
    name = owner.path.resolve().name
    evaluated = Path(model).expanduser().resolve() if model else None
    if evaluated is not None and evaluated != owner.final.resolve():  # a checkpoint, not the final model
        name = f"{name} @{evaluated.name}"
    try:
        manifest = read_manifest(owner)
        if manifest is not None:
            return EvalIdentity(name, manifest.model or model, manifest.method, manifest.seed)
    except UsageError as exc:
        if notes is None:
            raise
        notes.append(f"{name}: {exc}")
    return EvalIdentity(name, model=model)
