"""Tasks built once and kept under the user's cache directory, keyed by their recipe.

A task lives in ``${INFOPPO_CACHE:-${XDG_CACHE_HOME:-~/.cache}/infoppo}/tasks/<name>-<recipe id>/``
with a ``manifest.json`` that lists the sha256 of every file. A use verifies them all: a directory
with a missing or changed file is thrown away and rebuilt, never half-used. A build happens in a
temporary directory beside the final one and is renamed into place whole; Ctrl-C (or any error)
removes it, and the leftovers of a build killed outright are removed by the next build. Builders
take an ``flock`` on ``.<name>-<recipe id>.lock`` (the kernel releases it however a holder dies), so
two processes never build the same task at once: the second waits and then uses the first's.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_json, fsync_directory
from infoppo_cli.errors import UsageError
from infoppo_cli.records import utc_timestamp
from infoppo_cli.records.text import loads
from infoppo_cli.tasks.build import (
    HELDOUT_FILE,
    MODEL_DIR,
    TRAIN_FILE,
    Progress,
    TaskRecipe,
    build_task,
)

MANIFEST = "manifest.json"
CACHE_ENV = "INFOPPO_CACHE"
REQUIRED_FILES = (
    f"{MODEL_DIR}/config.json",
    f"{MODEL_DIR}/model.safetensors",
    f"{MODEL_DIR}/tokenizer.json",
    TRAIN_FILE,
    HELDOUT_FILE,
)
"""Files every build has; a manifest that does not list them all is not a build's."""


@dataclass(frozen=True)
class TaskFiles:
    """A verified task in the cache: where its files are and how it was built."""

    directory: Path
    model_dir: Path
    train_file: Path
    heldout_file: Path
    recipe_id: str
    build_seconds: float
    """How long the build took when it ran (now, or the first time)."""
    built_now: bool
    """Whether this call built it (``False``: it was already in the cache)."""
    warm_start: dict[str, Any]
    """The manifest's measurements: parameters, final loss, held-out accuracy at T=1.0 and greedy."""


def cache_root() -> Path:
    """``$INFOPPO_CACHE``, else ``$XDG_CACHE_HOME/infoppo``, else ``~/.cache/infoppo``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "infoppo"


def task_dir(recipe: TaskRecipe, root: Path | None = None) -> Path:
    """Where ``recipe``'s task lives (whether or not it is built yet)."""
    return (root or cache_root()) / "tasks" / f"{recipe.name}-{recipe.recipe_id()}"


def cached_task(recipe: TaskRecipe, root: Path | None = None) -> TaskFiles | None:
    """The verified copy of ``recipe``'s task in the cache, or ``None``; never builds (a dry run)."""
    return _verified(task_dir(recipe, root), recipe.recipe_id())


def planned_task(recipe: TaskRecipe, root: Path | None = None) -> TaskFiles:
    """Where ``recipe``'s task will be once :func:`ensure_task` has built it (its files need not exist):
    what a dry run plans with before the first real run builds it."""
    return _files(task_dir(recipe, root), recipe.recipe_id())


def ensure_task(
    recipe: TaskRecipe | None = None, root: Path | None = None, on_progress: Progress | None = None
) -> TaskFiles:
    """The task of ``recipe`` (the default task when ``None``), built first if the cache lacks a
    verified copy. ``on_progress(stage, done, total)`` follows a build (see ``build.Progress``); it is
    not called on a cache hit. A cache directory that cannot be written is a :class:`UsageError`."""
    recipe = recipe or TaskRecipe()
    final = task_dir(recipe, root)
    recipe_id = recipe.recipe_id()
    found = _verified(final, recipe_id)
    if found is not None:
        return found
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        with _build_lock(final, on_progress):
            found = _verified(final, recipe_id)  # another process may have built it meanwhile
            if found is not None:
                return found
            _discard(final)
            _remove_leftovers(final)
            _build_into_place(recipe, final, on_progress)
    except OSError as exc:
        shown = f"{exc.filename}: " if exc.filename else ""
        raise UsageError(
            f"cannot build the task in the cache {final.parent} ({shown}{exc.strerror or exc}); "
            f"set {CACHE_ENV} to a writable directory"
        ) from None
    built = _verified(final, recipe_id)
    if built is None:
        raise UsageError(f"{final}: the task just built does not verify; is something else writing there?")
    return replace(built, built_now=True)


def verify_task(directory: Path, recipe_id: str) -> str | None:
    """Why ``directory`` is not a complete, unmodified build of ``recipe_id``; ``None`` if it is."""
    manifest = _read_manifest(directory)
    if manifest is None:
        return "no readable manifest"
    if manifest.get("recipe_id") != recipe_id:
        return f"built from recipe {manifest.get('recipe_id')!r}, not {recipe_id!r}"
    files = manifest.get("files")
    if not isinstance(files, dict):
        return "the manifest lists no files"
    unlisted = [name for name in REQUIRED_FILES if name not in files]
    if unlisted:
        return f"the manifest does not list {', '.join(unlisted)}"
    for name, digest in files.items():
        path = directory / name
        if not path.is_file():
            return f"{name} is missing"
        if file_sha256(path) != digest:
            return f"{name} has changed since the build"
    return None


def file_sha256(path: Path, sync: bool = False) -> str:
    """The file's sha256; ``sync`` also flushes it to disk first (before the build is renamed in)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        if sync:
            os.fsync(handle.fileno())
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        manifest = loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _verified(directory: Path, recipe_id: str) -> TaskFiles | None:
    if not directory.is_dir() or verify_task(directory, recipe_id) is not None:
        return None
    manifest = _read_manifest(directory) or {}
    return replace(
        _files(directory, recipe_id),
        build_seconds=float(manifest.get("build_seconds", 0.0)),
        warm_start=dict(manifest.get("warm_start", {})),
    )


def _files(directory: Path, recipe_id: str) -> TaskFiles:
    """The paths of a task in ``directory``, whether or not it is built yet."""
    return TaskFiles(
        directory=directory,
        model_dir=directory / MODEL_DIR,
        train_file=directory / TRAIN_FILE,
        heldout_file=directory / HELDOUT_FILE,
        recipe_id=recipe_id,
        build_seconds=0.0,
        built_now=False,
        warm_start={},
    )


@contextlib.contextmanager
def _build_lock(final: Path, on_progress: Progress | None) -> Iterator[None]:
    with open(final.parent / f".{final.name}.lock", "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process is building this task: wait for it
            if on_progress is not None:
                on_progress("waiting", 0, 0)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _temp_name(final: Path, kind: str) -> Path:
    return final.parent / f".{final.name}.{os.getpid()}@{socket.gethostname()}.{kind}"


def _discard(final: Path) -> None:
    """Move a failed copy out of the way in one rename, then delete it: never half-deleted in place."""
    if not final.exists():
        return
    doomed = _temp_name(final, "discard")
    os.replace(final, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


def _remove_leftovers(final: Path) -> None:
    """Remove the temporaries of builds of ``final`` that died; holding the lock proves they did."""
    for path in final.parent.glob(f".{final.name}.*"):
        if path.suffix in (".tmp", ".discard") and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)


def _build_into_place(recipe: TaskRecipe, final: Path, on_progress: Progress | None) -> None:
    temporary = _temp_name(final, "tmp")
    temporary.mkdir()
    try:
        started = time.monotonic()
        report = build_task(recipe, temporary, on_progress)
        files = {
            str(path.relative_to(temporary)): file_sha256(path, sync=True)
            for path in sorted(temporary.rglob("*"))
            if path.is_file()
        }
        atomic_write_json(
            temporary / MANIFEST,
            {
                "recipe_id": recipe.recipe_id(),
                "recipe": recipe.as_dict(),
                "created": utc_timestamp(),
                "build_seconds": round(time.monotonic() - started, 2),
                "warm_start": {
                    "parameters": report.parameters,
                    "final_loss": round(report.final_loss, 4),
                    "teacher_accuracy": round(report.expected_accuracy, 4),
                    "reference_tokens_mean": round(report.reference_tokens_mean, 1),
                    "heldout_accuracy": report.accuracy,
                },
                "files": files,
            },
        )
        os.rename(temporary, final)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    fsync_directory(final.parent)
