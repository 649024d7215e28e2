"""``OUT/.sweep.lock``: one sweep process per sweep directory (``rundir/lock.py``'s mechanism)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir.lock import DirectoryLock

LOCK_FILE = ".sweep.lock"


@contextlib.contextmanager
def sweep_lock(out_dir: Path) -> Iterator[str | None]:
    """Hold ``OUT/.sweep.lock`` so that two sweep processes never drive the same directory.

    The lock is an ``flock``: the kernel releases it when the holder exits, however it exits, so a lock
    file left by a killed sweep is taken over; the context yields a note saying so (None otherwise).
    """
    lock = DirectoryLock(out_dir, LOCK_FILE)
    if not lock.acquire():
        raise UsageError(f"{out_dir} is in use by another infoppo sweep ({lock.holder()}); wait for it")
    try:
        yield _takeover_note(out_dir, lock.previous)
    finally:
        lock.release()


def _takeover_note(out_dir: Path, previous: str) -> str | None:
    """What the lock file said when this sweep acquired it: a sweep that did not release it cleanly."""
    if not previous:
        return None
    return f"took over {out_dir / LOCK_FILE} left by a sweep that stopped ({previous}, no longer running)"
