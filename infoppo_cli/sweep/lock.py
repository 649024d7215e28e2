"""``OUT/.sweep.lock``: one sweep process per sweep directory."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from infoppo_cli.errors import UsageError

LOCK_FILE = ".sweep.lock"


@contextlib.contextmanager
def sweep_lock(out_dir: Path) -> Iterator[str | None]:
    """Hold ``OUT/.sweep.lock`` so that two sweep processes never drive the same directory.

    The lock is an ``flock``: the kernel releases it when the holder exits, however it exits, so a lock
    file left by a killed sweep is taken over; the context yields a note saying so (None otherwise).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / LOCK_FILE, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise UsageError(
                f"{out_dir} is in use by another infoppo sweep ({holder}); wait for it"
            ) from None
        handle.seek(0)
        previous = handle.read().strip()
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        try:
            yield _takeover_note(out_dir, previous)
        finally:
            handle.truncate(0)  # a clean stop leaves an empty lock file: nothing to take over
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _takeover_note(out_dir: Path, previous: str) -> str | None:
    """What the lock file said when this sweep acquired it: a sweep that did not release it cleanly."""
    if not previous:
        return None
    return f"took over {out_dir / LOCK_FILE} left by a sweep that stopped ({previous}, no longer running)"
