"""``manifest.json``: a run's resolved config, exact command, versions, commit, seed, status and times.

One writer (:func:`write_manifest`, atomic) and one reader (:func:`read_manifest`). The reader's one
error policy: a manifest that cannot be read, or that is not a JSON object, is a :class:`UsageError`;
so is a field of the wrong shape, found when a command asks for it (:class:`Manifest`): every such error
is one line naming the file and the field (``RUN/manifest.json is not an infoppo train manifest:
config.request is missing, empty or not an object``). A command that can do without the manifest (a
report) shows that same line as a warning.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.errors import UsageError
from infoppo_cli.rundir.layout import RunDir, run_of_model

_KINDS = {str: "a string", int: "an integer", dict: "an object"}


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest; each field is checked when it is asked for (see the module)."""

    path: Path
    record: dict[str, Any]

    def problem(self, what: str) -> UsageError:
        """The one error of a manifest whose field ``what`` describes is malformed."""
        return UsageError(f"{self.path} is not an infoppo train manifest: {what}")

    def get(self, *keys: str, kind: type | None = None, required: bool = False) -> Any:
        """The value at ``keys`` (``"config", "openrlhf_flags", "ckpt.path"``); ``None`` when absent
        (or null), unless ``required``. A value that is not of ``kind`` is malformed."""
        value: Any = self.record
        for depth, key in enumerate(keys):
            if value is None:
                break
            if not isinstance(value, dict):
                raise self.problem(f"{'.'.join(keys[:depth])} is not an object")
            value = value.get(key)
        name = ".".join(keys)
        if value is None:
            if required:
                raise self.problem(f"{name} is missing")
            return None
        if kind is not None and (not isinstance(value, kind) or isinstance(value, bool) and kind is not bool):
            raise self.problem(f"{name} = {json.dumps(value)} is not {_KINDS.get(kind, kind.__name__)}")
        return value

    @property
    def config(self) -> dict[str, Any]:
        config = self.record.get("config")
        if not isinstance(config, dict):
            raise self.problem("config is missing or not an object")
        return config

    def section(self, name: str) -> dict[str, Any]:
        """``config.<name>`` (``request``, ``openrlhf_flags``, ``infotime``): a non-empty object."""
        value = self.config.get(name)
        if not isinstance(value, dict) or not value:
            raise self.problem(f"config.{name} is missing, empty or not an object")
        return value

    @property
    def command(self) -> list[str]:
        command = self.record.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(t, str) for t in command):
            raise self.problem("command is missing or not a list of strings")
        return command

    @property
    def versions(self) -> dict[str, Any]:
        versions = self.record.get("versions") or {}
        if not isinstance(versions, dict):
            raise self.problem("versions is not an object")
        return versions

    @property
    def git_commit(self) -> str | None:
        commit = self.record.get("git_commit") or None
        if commit is not None and not isinstance(commit, str):
            raise self.problem("git_commit is not a string")
        return commit

    @property
    def method(self) -> str | None:
        return self.get("config", "method", kind=str)

    @property
    def preset(self) -> str | None:
        return self.get("config", "preset", kind=str)

    @property
    def model(self) -> str | None:
        """The base model the run trained (``config.model``)."""
        return self.get("config", "model", kind=str)

    def flag(self, name: str, kind: type | None = None) -> Any:
        """The OpenRLHF flag ``name`` the run was launched with (``None`` when not recorded)."""
        return self.get("config", "openrlhf_flags", name, kind=kind)

    @property
    def seed(self) -> int | None:
        return self.get("seed", kind=int)

    @property
    def status(self) -> str | None:
        return self.get("status", kind=str)

    @property
    def start_time(self) -> str | None:
        return self.get("start_time", kind=str)


def manifest_path(run: RunDir | str | os.PathLike[str]) -> Path:
    """The manifest of a run directory, which may also be given as the manifest file itself."""
    if isinstance(run, RunDir):
        return run.manifest
    path = Path(run).expanduser()
    return path if path.is_file() else RunDir(path).manifest


def read_manifest(run: RunDir | str | os.PathLike[str]) -> Manifest | None:
    """The run's manifest; ``None`` when it has none. One that cannot be read, or is no JSON object, is
    a :class:`UsageError` (see the module)."""
    path = manifest_path(run)
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable manifest ({exc})") from None
    manifest = Manifest(path, record if isinstance(record, dict) else {})
    if not isinstance(record, dict):
        raise manifest.problem("it is not a JSON object")
    return manifest


def write_manifest(run: RunDir, record: Mapping[str, Any]) -> None:
    """Write the manifest atomically (a reader sees the old one or the new one)."""
    atomic_write_json(run.manifest, dict(record))


def trained_response_length(model: str | os.PathLike[str]) -> int | None:
    """The response length (``rollout.max_new_tokens``) a model was trained with, when it belongs to a
    run that recorded it: evaluation uses the same budget (the paper: max tokens = training length)."""
    run = run_of_model(model)
    manifest = read_manifest(run) if run is not None else None
    return manifest.flag("rollout.max_new_tokens", int) if manifest is not None else None
