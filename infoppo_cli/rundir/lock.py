"""``RUN/.infoppo.lock``: one infoppo command writes a run directory at a time.

The lock is an ``flock`` on a file in the directory. The kernel releases it when the last process that
holds it exits, however it exits (SIGKILL included), so a dead holder never leaves a stale lock; the
file says who took it (``pid N``), which a refused command names. ``infoppo train`` holds its run's
lock for the run's life and hands the same open file to its launch process, so the directory stays
locked until the launch process, which stops Ray before it exits, is gone too. The same mechanism keeps
two ``infoppo sweep`` processes out of one sweep directory (``sweep/lock.py``).

A run whose manifest says ``running`` while nobody holds its lock was interrupted: the process that ran
it died before it could record its end (:func:`run_status`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

from infoppo_cli.rundir.layout import RunDir

RUN_LOCK_FILE = ".infoppo.lock"
RETRY_S = 0.5
"""How long a lock attempt retries: a probe (:func:`lock_holder`) holds the lock for an instant."""


class DirectoryLock:
    """An exclusive ``flock`` on ``directory/name``, taken by :meth:`acquire` (or ``with``)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = Path(directory) / name
        self.handle = None
        self.previous = ""
        """What the file said when the lock was taken: a holder that did not release it cleanly."""

    def acquire(self) -> bool:
        """Take the lock (creating the directory and the file); False when another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        deadline = time.monotonic() + RETRY_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    handle.close()
                    return False
                time.sleep(0.05)
        handle.seek(0)
        self.previous = handle.read().strip()
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        self.handle = handle
        return True

    def holder(self) -> str:
        """Who holds the lock, as its file says (``pid N``)."""
        try:
            return self.path.read_text(encoding="utf-8").strip() or "another process"
        except OSError:
            return "another process"

    def fileno(self) -> int:
        """The lock's open file: a child process given it (``pass_fds``) holds the lock too."""
        assert self.handle is not None, "the lock is not held"
        return self.handle.fileno()

    def release(self) -> None:
        """Empty the file (a clean end leaves nothing to report) and close it, which releases the lock
        unless a child process given it still runs (the lock is the open file's, shared with it)."""
        if self.handle is None:
            return
        with contextlib.suppress(OSError):
            self.handle.truncate(0)
            self.handle.flush()
        self.handle.close()
        self.handle = None


def lock_holder(directory: Path, name: str = RUN_LOCK_FILE) -> str | None:
    """Who holds ``directory/name`` (``pid N``), or ``None`` when nobody does; takes nothing."""
    path = Path(directory) / name
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None  # no lock file: never locked (or a directory that does not exist yet)
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "another process"
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def last_holder(run: RunDir) -> str | None:
    """What the run's lock file says of the process that last held it (``pid N``): after a clean end
    the file is empty (``None``); otherwise that process died holding it."""
    try:
        return (run.path / RUN_LOCK_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def run_lock(run: RunDir) -> DirectoryLock:
    """The lock of a run directory (not taken yet)."""
    return DirectoryLock(run.path, RUN_LOCK_FILE)


def busy_refusal(run: RunDir, holder: str) -> str:
    """The one line that refuses a second command on a run directory in use."""
    return (
        f"{run.path} is in use by another infoppo command ({holder}); one command at a time writes a run "
        "directory: wait for it to end, or stop it"
    )


def run_status(run: RunDir, recorded: str | None) -> str | None:
    """The run's status: as its manifest recorded it, except that a run recorded ``running`` that no
    process holds was ``interrupted`` (what ran it died before it could record its end)."""
    if recorded == "running" and lock_holder(run.path) is None:
        return "interrupted"
    return recorded
