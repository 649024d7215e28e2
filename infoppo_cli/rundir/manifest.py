"""``manifest.json``: a run's resolved config, exact command, versions, commit, seed, status and times.

Built here for every launch (:func:`new_manifest`, with :func:`launch_fields` and, at the end,
:func:`ended`), from the values ``infoppo train`` resolved. One writer (:func:`write_manifest`, atomic;
:func:`restore_manifest` puts back one as it was read) and one reader (:func:`read_manifest`). The
reader's one error policy: a manifest that cannot be read, or that is not a JSON object, is a
:class:`UsageError`; so is a field of the wrong shape, found when a command asks for it
(:class:`Manifest`): every such error is one line naming the file and the field (``RUN/manifest.json is
not an infoppo train manifest: config.request is missing, empty or not an object``). A command that can
do without the manifest (a report) shows that same line as a warning.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_bytes, atomic_write_json
from infoppo_cli.errors import UsageError
from infoppo_cli.records import utc_timestamp
from infoppo_cli.records.text import loads
from infoppo_cli.resources import stack_versions
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
        record = loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable manifest ({exc})") from None
    manifest = Manifest(path, record if isinstance(record, dict) else {})
    if not isinstance(record, dict):
        raise manifest.problem("it is not a JSON object")
    return manifest


def write_manifest(run: RunDir, record: Mapping[str, Any]) -> None:
    """Write the manifest atomically (a reader sees the old one or the new one)."""
    atomic_write_json(run.manifest, dict(record))


def restore_manifest(run: RunDir, saved: bytes) -> None:
    """Put back the manifest as it was read (``saved``, its bytes), atomically."""
    atomic_write_bytes(run.manifest, saved)


UNCOMMITTED = "+uncommitted"
"""After the commit, when infoppo's tracked files differ from it: the run's code is not that commit's."""


def git_commit(root: Path = Path(__file__).resolve().parents[2]) -> str | None:
    """The commit of infoppo's own checkout (``root``), followed by :data:`UNCOMMITTED` when its tracked
    files have changes (``None`` outside a checkout, or without git)."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    changes = git("status", "--porcelain", "--untracked-files=no")
    return commit + UNCOMMITTED if changes else commit


def new_manifest(
    config: Mapping[str, Any], command: Sequence[str], seed: int, status: str, **launch: Any
) -> dict[str, Any]:
    """A run's manifest: its resolved ``config``, the exact ``command``, the stack's versions, infoppo's
    commit, the ``seed``, the ``status`` and the ``launch``'s fields (:func:`launch_fields`)."""
    return {
        "config": config,
        "command": command,
        "versions": stack_versions(),
        "git_commit": git_commit(),
        "seed": seed,
        "status": status,
        **launch,
    }


def launch_fields(
    previous: Manifest | None,
    started: str,
    typed_command: str | None,
    changes: Mapping[str, Any],
    base_model: Mapping[str, Any],
) -> dict[str, Any]:
    """The fields of a launch at ``started``, a ``--resume`` of ``previous`` or a new run: when it first
    started and when last, the ``infoppo_command`` as typed at the first launch, the ``resumes`` (each
    with its time, its typed command and the settings it changed, ``changes``) and the ``base_model``
    (``rundir/base_model.py``; a resume keeps the Hub revision the run started from)."""
    fields: dict[str, Any] = {
        "start_time": (previous.start_time if previous else None) or started,
        "last_start_time": started,
    }
    if previous is not None:
        entry: dict[str, Any] = {"time": started, "overrides": changes}
        if typed_command:
            entry["command"] = typed_command
        fields["resumes"] = [*(previous.record.get("resumes") or []), entry]
    first = previous.record.get("infoppo_command") if previous is not None else typed_command
    if first:
        fields["infoppo_command"] = first
    kept = previous.record.get("base_model") if previous is not None else None
    same_hub_model = isinstance(kept, dict) and kept.get("hub_id") == base_model.get("hub_id")
    fields["base_model"] = kept if same_hub_model and kept.get("revision") else base_model
    return fields


def ended(record: Mapping[str, Any], status: str, exit_code: int) -> dict[str, Any]:
    """``record`` of a run that ended now with ``status`` and the process's ``exit_code``."""
    return {**record, "status": status, "end_time": utc_timestamp(), "exit_code": exit_code}


def trained_response_length(model: str | os.PathLike[str]) -> int | None:
    """The response length (``rollout.max_new_tokens``) a model was trained with, when it belongs to a
    run that recorded it: evaluation uses the same budget (InfoPPO's evaluation protocol: max tokens =
    training length)."""
    run = run_of_model(model)
    manifest = read_manifest(run) if run is not None else None
    return manifest.flag("rollout.max_new_tokens", int) if manifest is not None else None
