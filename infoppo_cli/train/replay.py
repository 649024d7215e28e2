"""``infoppo train --replay RUN``: the plan rebuilt from ``RUN/manifest.json``, and what changed since."""

from __future__ import annotations

import json
import types
import typing
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import parse_set_option
from infoppo_cli.resources import stack_versions
from infoppo_cli.rundir import MANIFEST_FILE, Manifest, read_manifest
from infoppo_cli.rundir.manifest import git_commit
from infoppo_cli.train.plan import TrainPlan, TrainRequest
from infoppo_cli.train.request import DEFAULT_SEED


@dataclass(frozen=True)
class Recorded:
    """What a finished (or started) run recorded about itself."""

    run_dir: Path
    request: dict[str, Any]
    flags: dict[str, Any]
    infotime: dict[str, Any]
    """infoppo's settings of the run (its ``RUN/config.json``; the manifest's ``config.infotime``)."""
    command: list[str]
    versions: dict[str, Any]
    git_commit: str | None


def read_recorded(run_dir: str) -> Recorded:
    """The manifest of ``run_dir`` (the directory or its ``manifest.json``), read by
    :func:`~infoppo_cli.rundir.read_manifest`; a missing, unreadable or ill-shaped one is a one-line
    :class:`UsageError` naming the file and the field."""
    try:
        manifest = read_manifest(run_dir)
        if manifest is None:
            raise UsageError(f"no {MANIFEST_FILE} there (not an `infoppo train` run directory)")
        recorded = Recorded(
            run_dir=manifest.path.parent.resolve(),
            request=dict(manifest.section("request")),
            flags=dict(manifest.section("openrlhf_flags")),
            infotime=_settings(manifest),
            command=list(manifest.command),
            versions=dict(manifest.versions),
            git_commit=manifest.git_commit,
        )
        _check_request(manifest, recorded.request)
        _check_flags(manifest)
    except UsageError as exc:
        raise UsageError(f"--replay {run_dir}: {exc}") from None
    return recorded


def _settings(manifest: Manifest) -> dict[str, Any]:
    """infoppo's recorded settings (``config.infotime``), shown where they differ; none when absent."""
    recorded = manifest.config.get("infotime")
    return dict(recorded) if isinstance(recorded, dict) else {}


def _check_request(manifest: Manifest, request: dict[str, Any]) -> None:
    """``config.request`` must still make a :class:`TrainRequest` that infoppo accepts."""
    hints = typing.get_type_hints(TrainRequest)
    for item in fields(TrainRequest):
        required = item.default is MISSING and item.default_factory is MISSING
        if item.name not in request:
            if required:
                raise manifest.problem(f"config.request.{item.name} is missing")
            continue
        value, expected = request[item.name], hints[item.name]
        if not _fits(value, expected):
            raise manifest.problem(
                f"config.request.{item.name} = {json.dumps(value)} is not {_described(expected)}"
            )
    for text in request.get("overrides") or []:
        try:
            parse_set_option(text)
        except UsageError as exc:
            raise manifest.problem(
                f"config.request.overrides holds {text!r}, which infoppo now refuses ({exc})"
            ) from None


def _check_flags(manifest: Manifest) -> None:
    """The flags a replay reads: where the run wrote, its data and its seed."""
    manifest.flag("data.prompt_dataset", str)
    manifest.flag("train.seed", int)
    manifest.get("config", "openrlhf_flags", "ckpt.path", kind=str, required=True)


def _members(expected: Any) -> tuple[Any, ...]:
    if typing.get_origin(expected) in (typing.Union, types.UnionType):
        return typing.get_args(expected)
    return (expected,)


def _fits(value: Any, expected: Any) -> bool:
    return any(_fits_member(value, member) for member in _members(expected))


def _fits_member(value: Any, member: Any) -> bool:
    if member is type(None):
        return value is None
    if typing.get_origin(member) is list:
        (inner,) = typing.get_args(member) or (Any,)
        return isinstance(value, list) and all(inner is Any or _fits(v, inner) for v in value)
    if isinstance(value, bool):
        return member is bool
    kinds = {float: int | float, int: int, str: str, bool: bool}
    if member not in kinds:
        return True  # a type this check does not know: TrainRequest itself will judge it
    return isinstance(value, kinds[member])


_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _described(expected: Any) -> str:
    words = []
    for member in _members(expected):
        if member is type(None):
            words.append("null")
        elif typing.get_origin(member) is list:
            words.append("a list of strings")
        else:
            words.append(_WORDS.get(member, getattr(member, "__name__", str(member))))
    return " or ".join(words)


def recorded_output_dir(recorded: Recorded) -> Path:
    """The directory the recorded run wrote to (its checkpoints' parent)."""
    return Path(str(recorded.flags["ckpt.path"])).parent


def replay_output_dir(recorded: Recorded) -> Path:
    """Where a replay goes without ``--output-dir``: ``RUN-replay`` beside the recorded run (the run's
    own directory holds the run), ``RUN-replay2``, ... when that holds one already."""
    base = recorded_output_dir(recorded)
    for number in range(1, 1000):
        candidate = base.with_name(f"{base.name}-replay{number if number > 1 else ''}")
        if not candidate.exists():
            return candidate
    raise UsageError(f"--replay: {base}-replay ... {base}-replay999 all exist; pass --output-dir")


def replay_request(
    recorded: Recorded, overrides: list[str], output_dir: str | None = None, resume: bool = False
) -> TrainRequest:
    """The recorded request, pinned to the resolved data file, plus ``--set``s: a new ``--set`` of a
    flag replaces the recorded one (and a new ``train.seed`` the recorded seed). It writes to
    ``output_dir``; else, with ``resume``, to the recorded run's own directory (continuing it), else to a
    new directory beside it (:func:`replay_output_dir`)."""
    known = {f.name for f in fields(TrainRequest)}
    values = {key: value for key, value in recorded.request.items() if key in known}
    values["data"] = str(recorded.flags.get("data.prompt_dataset", values.get("data")))
    default = recorded_output_dir(recorded) if resume else replay_output_dir(recorded)
    values["output_dir"] = output_dir or str(default)
    values["resume"] = resume
    values["seed"] = int(recorded.flags.get("train.seed", values.get("seed") or DEFAULT_SEED))
    given = {parse_set_option(text)[0] for text in overrides}
    kept = [text for text in values.get("overrides") or [] if parse_set_option(text)[0] not in given]
    values["overrides"] = [*kept, *overrides]
    if "train.seed" in given:
        values["seed"] = None
    return TrainRequest(**values)


def differences(recorded: Recorded, plan: TrainPlan) -> list[tuple[str, str, str]]:
    """``(what, recorded, now)`` for every OpenRLHF flag, infoppo setting, version and the commit that
    differ, and the interpreter."""
    rows: list[tuple[str, str, str]] = []
    for key in sorted(set(recorded.flags) | set(plan.flags)):
        old, new = recorded.flags.get(key), plan.flags.get(key)
        if json.dumps(old) != json.dumps(new, default=str):
            rows.append((f"--{key}", _shown(old), _shown(new)))
    now = stack_versions()
    for name in sorted(set(recorded.versions) | set(now)):
        if recorded.versions.get(name) != now.get(name):
            rows.append((f"version of {name}", _shown(recorded.versions.get(name)), _shown(now.get(name))))
    commit = git_commit()
    if recorded.git_commit != commit:
        rows.append(("git commit", _shown(recorded.git_commit), _shown(commit)))
    for key in sorted(set(recorded.infotime) | set(plan.infotime)):
        old, new = recorded.infotime.get(key), plan.infotime.get(key)
        if old != new:
            rows.append((f"infoppo's {key}", _shown(old), _shown(new)))
    if recorded.command[:1] != plan.command()[:1]:
        rows.append(("interpreter", _shown(recorded.command[0]), plan.command()[0]))
    return rows


def _shown(value: Any) -> str:
    return "(absent)" if value is None else str(value)
