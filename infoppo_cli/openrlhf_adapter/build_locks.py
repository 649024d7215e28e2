"""Stale locks of torch's extension builds, which hang every later run.

DeepSpeed builds its ops (FusedAdam, the CPU accelerator's shared-memory all-reduce) with torch's
``cpp_extension.load``, in ``<root>/<py311_cpu|py311_cu128...>/<op>/``. Every process that loads an op,
built or not, first creates ``lock`` there, runs ninja (a no-op once built) and removes it; a process
that finds ``lock`` waits until it is gone, without end and without a word. Ray kills an actor hard when
its run stops, so a run stopped while one of its workers held the lock (the first seconds of a start)
leaves it behind, and every later run on the machine waits forever in its first worker's start (seen:
``FileBaton.wait`` under ``deepspeed.comm.torch.build_shm_op``).

A lock is left behind when no process builds in its folder: ninja and the compilers it runs work there
(their working directory), and a live holder is without them only for the moment between creating the
lock and starting ninja. On a network filesystem (a cluster's shared home) a build on another machine
is invisible here, so only a lock older than any build is taken as stale there.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

LOCK = "lock"
SETTLE_S = 10.0
"""A lock younger than this may belong to a process about to start ninja: it is looked at again then."""
NETWORK_STALE_S = 1800.0
"""On a network filesystem, a lock this old is stale whoever took it: no op build takes 30 minutes."""
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "glusterfs", "9p"}
)


def extensions_root() -> Path:
    """Where torch builds extensions: ``$TORCH_EXTENSIONS_DIR``, else its per-user cache folder
    (``cpp_extension.get_default_build_root``, read without importing torch)."""
    chosen = os.environ.get("TORCH_EXTENSIONS_DIR")
    if chosen:
        return Path(chosen)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(os.path.realpath(Path(cache) / "torch_extensions"))


def build_locks(root: Path) -> list[Path]:
    """The build locks under ``root``: ``<root>/<op>/lock`` and ``<root>/<python-device>/<op>/lock``."""
    if not root.is_dir():
        return []
    return sorted({*root.glob(f"*/{LOCK}"), *root.glob(f"*/*/{LOCK}")})


def _working_directories() -> set[str] | None:
    """Every process's working directory on this machine; ``None`` where they cannot be read (no
    ``/proc``)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    found = set()
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                found.add(os.readlink(entry / "cwd"))
            except OSError:  # gone, or another user's
                continue
    return found


def filesystem_type(path: Path, mounts_file: Path = Path("/proc/mounts")) -> str | None:
    """The type of the filesystem ``path`` is on: its nearest mount point's in ``mounts_file``."""
    try:
        mounts = mounts_file.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    target, best, kind = os.path.realpath(path), -1, None
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), fields[2]
    return kind


def _identity(lock: Path) -> tuple[int, float] | None:
    """The lock file's inode and modification time; ``None`` when there is none."""
    try:
        found = lock.stat()
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_mtime


def _on_network(path: Path) -> bool:
    kind = filesystem_type(path)
    return kind is None or kind in NETWORK_FILESYSTEMS or kind.startswith("fuse.")


def clear_stale_build_locks(
    root: Path | None = None,
    *,
    now: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Path]:
    """Remove the build locks under ``root`` (default: torch's) that no process will remove, saying so
    on stderr; returns them. A young lock is looked at again once it is :data:`SETTLE_S` old."""
    removed = []
    for lock in build_locks(root or extensions_root()):
        folder = os.path.realpath(lock.parent)
        seen = _identity(lock)
        if seen is None:  # its holder finished meanwhile
            continue
        age = now() - seen[1]
        if _on_network(lock.parent):
            stale = age >= NETWORK_STALE_S
        else:
            if age < SETTLE_S:
                sleep(SETTLE_S - age)
            working = _working_directories()
            stale = working is not None and folder not in working
        if stale and _identity(lock) == seen:  # not released and taken again meanwhile
            lock.unlink(missing_ok=True)
            removed.append(lock)
            print(
                f"infoppo: removed {lock}, left by a build of a torch extension that was killed: every "
                "run would have waited on it forever",
                file=sys.stderr,
            )
    return removed
