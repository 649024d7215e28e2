"""What ``--resume`` may continue, checked before any work: the same run, no shorter, from a checkpoint
that is whole.

A resumed run trains on from its checkpoint with the settings of the new command line. Had those
changed the method or its settings, the run directory would hold one run made of two (an InfoPPO run
finished by PPO, reported as one); so the settings that define the run must equal the recorded ones,
unless ``--resume-override KEY`` names each change, which the manifest then records. A run cannot be
resumed to fewer RL steps than it has trained, nor from a checkpoint that was being written when the
run was killed (DeepSpeed writes its ``latest`` tag last).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from infoppo_cli.components import SETTINGS
from infoppo_cli.errors import UsageError
from infoppo_cli.hyperparameters import Setting
from infoppo_cli.openrlhf_adapter.checkpoints import holds_checkpoint_folder
from infoppo_cli.rundir import Manifest

_Reader = Callable[[dict[str, Any]], Any]


def _flag(name: str) -> _Reader:
    return lambda config: (config.get("openrlhf_flags") or {}).get(name)


def _setting(setting: Setting) -> _Reader:
    """A declared method setting, from the flags where OpenRLHF carries it, else infoppo's settings."""
    if setting.openrlhf is not None:
        return _flag(setting.openrlhf)
    return lambda config: (config.get("infotime") or {}).get(setting.name)


RUN_DEFINING: dict[str, _Reader] = {
    "method": lambda config: config.get("method"),
    "model": lambda config: config.get("model"),
    "data": _flag("data.prompt_dataset"),
    "seed": _flag("train.seed"),
    "clip": _flag("actor.eps_clip_low_high"),
    "actor_lr": _flag("actor.adam.lr"),
    "critic_lr": _flag("critic.adam.lr"),
    "rollout_batch": _flag("rollout.batch_size"),
    "samples_per_prompt": _flag("rollout.n_samples_per_prompt"),
    "train_batch": _flag("train.batch_size"),
    **{setting.key: _setting(setting) for setting in SETTINGS.values() if setting.run_defining},
}
"""The settings that define a run, by the key ``--resume-override`` names, read from a manifest's
``config`` (the recorded run's, or the new plan's): the run's own, then every run-defining method
setting (``components.SETTINGS``)."""


def changed_settings(previous: dict[str, Any], planned: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``key -> (recorded, planned)`` for each run-defining setting that differs."""
    found = {}
    for key, read in RUN_DEFINING.items():
        old, new = read(previous), read(planned)
        if old != new:
            found[key] = (old, new)
    return found


def check_changes(previous: Manifest, planned: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Refuse a resume that changes a run-defining setting not named by ``--resume-override``; returns
    the named changes (``{key: [recorded, planned]}``) for the manifest."""
    unknown = [key for key in overrides if key not in RUN_DEFINING]
    if unknown:
        raise UsageError(
            f"--resume-override {unknown[0]!r} is not a run setting; choose from: {', '.join(RUN_DEFINING)}"
        )
    changes = changed_settings(previous.config, planned)
    refused = {key: values for key, values in changes.items() if key not in overrides}
    if refused:
        key, (old, new) = next(iter(refused.items()))
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise UsageError(
            f"cannot resume: the run was trained with {key} {old!r}, this command asks for {new!r}{more}; "
            f"keep the run's settings, or pass --resume-override {key} to continue it with the change"
        )
    return {key: list(values) for key, values in changes.items()}


def trained_steps(ckpt_root: Path) -> int | None:
    """The RL step of the checkpoint a resume would load (DeepSpeed's ``latest`` tag under
    ``ckpt/_actor``); ``None`` when there is no checkpoint: no folder, or one that holds no ``latest``
    and no checkpoint folder (a first save that failed leaves DeepSpeed's ``zero_to_fp32.py`` behind).
    A checkpoint folder without ``latest``, or a ``latest`` naming a folder that is not there, is an
    error saying how to go on: which checkpoint was whole cannot be told."""
    actor = ckpt_root / "_actor"
    if not actor.is_dir():
        return None
    latest = actor / "latest"
    tag = latest.read_text(encoding="utf-8").strip() if latest.is_file() else ""
    if not tag and not holds_checkpoint_folder(actor):
        return None
    if not tag or not (actor / tag).is_dir():
        raise UsageError(
            f"cannot resume: {actor} holds no complete checkpoint (the run stopped while writing its "
            f"first); start again in a new --output-dir, or remove {ckpt_root} to retrain this run from "
            "step 0"
        )
    digits = tag.removeprefix("best_").removeprefix("global_step")
    if not digits.isdigit():
        raise UsageError(f"cannot resume: {latest} names {tag!r}, not a global_stepN checkpoint")
    return int(digits)


def check_length(ckpt_root: Path, steps: int, finished_at: int | None = None) -> int | None:
    """Refuse resuming to fewer RL steps than the checkpoint has, or (a run that ``finished_at`` its
    checkpoint's step) to no more; returns the checkpoint's step."""
    done = trained_steps(ckpt_root)
    least = done + 1 if done is not None and done == finished_at else done
    if least is not None and steps < least:
        finished = " and finished" if least > done else ""
        raise UsageError(
            f"cannot resume to {steps} RL steps: the run has trained {done} already{finished}; "
            f"--steps N with N >= {least}"
        )
    return done
