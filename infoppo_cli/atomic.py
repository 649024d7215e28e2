"""Files: the check every writing command makes of its output before any work, and atomic writes (a
reader sees the old file or the new one, never a half-written one). Reading JSONL and the timestamp
format live with the records (:mod:`infoppo_cli.records`)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from infoppo_cli.errors import EnvironmentProblem, UsageError

_TEMP_SUFFIX = ".tmp"


class DiskFull(EnvironmentProblem, OSError):
    """A write that found no space left on its device (``ENOSPC``): one line naming the path, the space
    it needed where that is known, and the space free there (exit code 1). Still an ``OSError`` with
    its errno, for callers that handle those."""

    def __init__(self, path: str | os.PathLike[str], needed: float | None = None) -> None:
        self.path, self.needed = Path(path), needed
        self.message = disk_full_message(self.path, needed)
        OSError.__init__(self, errno.ENOSPC, self.message, str(path))

    def __str__(self) -> str:
        return self.message


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a device with no space left (or an exceeded disk quota)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def size_text(count: float) -> str:
    """A byte count for people: ``48 MB``, ``1.2 GB`` (decimal units, as ``df -H``)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:,.{1 if count < 10 * scale else 0}f} {unit}"
    return f"{count:,.0f} bytes"


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """The space free to this user on the file system that holds ``path`` (or would: its nearest
    existing parent); ``None`` when it cannot be read."""
    existing = Path(path).absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        return shutil.disk_usage(existing).free
    except OSError:
        return None


def disk_full_message(path: str | os.PathLike[str], needed: float | None = None, whose: str = "it") -> str:
    """The one line for a write of ``path`` that found its device full: ``whose`` needs ``needed``."""
    free = free_bytes(path)
    room = f"{size_text(free)} free there" if free is not None else "its free space unknown"
    need = f"{whose} needs about {size_text(needed)}, " if needed else ""
    return f"no space left on the device of {path}: {need}{room}; free some space or write elsewhere"


def _temp_prefix(target: Path) -> str:
    # The writer's pid and host are in the name, so a later run can tell a SIGKILLed writer's leftover
    # (removed) from a live writer's file (left alone), even on a shared file system.
    return f".{target.name}.{os.getpid()}@{socket.gethostname()}."


def remove_stale_temporaries(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files that killed writers of ``target`` left beside it; returns them."""
    target = Path(target)
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(\d+)@(.+)\.[^.]+{re.escape(_TEMP_SUFFIX)}$")
    removed = []
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    host = socket.gethostname()
    for name in names:
        match = pattern.match(name)
        if match is None or match.group(2) != host or _process_alive(int(match.group(1))):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target.parent / name)
            removed.append(target.parent / name)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def _umask() -> int:
    """The process umask, read without changing it where Linux reports it (no window with umask 0)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _new_file_mode(target: Path) -> int:
    """An existing file keeps its permissions; a new one gets 0666 minus the umask, as ``open`` gives
    (``mkstemp`` alone would leave 0600)."""
    try:
        existing = target.stat()
    except OSError:
        return 0o666 & ~_umask()
    return stat.S_IMODE(existing.st_mode) if stat.S_ISREG(existing.st_mode) else 0o666 & ~_umask()


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Flush a directory's entries, so a rename or a new file in it survives a power loss (POSIX
    leaves this to the caller: fsync of the file alone does not persist its name)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a directory; the data itself is synced
        pass
    finally:
        os.close(fd)


def _make_parents(target: Path) -> list[Path]:
    """Create the missing directories above ``target``; returns them, deepest first."""
    missing = []
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    target.parent.mkdir(parents=True, exist_ok=True)
    return missing


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], mode: str = "w", durable: bool = True) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success fsync and rename it over ``path``.

    On any exception (Ctrl-C included) the temporary file is removed and ``path`` is left untouched;
    the leftovers of a writer killed outright are removed by the next write of ``path``. The file gets
    normal permissions (see :func:`_new_file_mode`). ``durable`` also fsyncs the directory after the
    rename, so the new name survives a crash; pass ``False`` for files that are cheap to rebuild.
    """
    target = Path(path)
    created = _make_parents(target)
    remove_stale_temporaries(target)
    fd, tmp_name = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=_TEMP_SUFFIX, dir=target.parent)
    try:
        os.fchmod(fd, _new_file_mode(target))
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        for directory in created:  # a failed write leaves no trace, not even an empty data/ folder
            with contextlib.suppress(OSError):
                directory.rmdir()
        if is_disk_full(exc):
            raise DiskFull(target) from None
        raise
    if durable:
        fsync_directory(target.parent)


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_output_target(
    path: str | os.PathLike[str],
    kind: Literal["file", "dir"] = "file",
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    option: str = "--out",
) -> Path:
    """Refuse, before any work, an output that writing would damage or that cannot be written.

    Refused with a :class:`UsageError` (one line, exit 2): a FIFO, device or socket; a directory where a
    file is expected (``kind="file"``) or a file where a directory is expected (``kind="dir"``); one of
    the command's own ``inputs`` (same path after resolving links, or a hard link of it); a location
    whose nearest existing directory cannot be written. Returns ``path`` as a :class:`Path`.
    """
    target = Path(path).expanduser()
    shown = f"{option} {path}"
    try:
        status = target.stat()
    except (FileNotFoundError, NotADirectoryError):  # the second: a file on the way, named below
        status = None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot use this path ({exc.strerror or exc})") from None
    if status is not None:
        _refuse_wrong_kind(status, kind, shown)
    _refuse_inputs(target, status, inputs, shown)
    _refuse_unwritable(target if status is not None and kind == "dir" else target.parent, shown)
    return target


def _refuse_wrong_kind(status: os.stat_result, kind: str, shown: str) -> None:
    for is_kind, name in _SPECIAL_KINDS:
        if is_kind(status.st_mode):
            wanted = "file" if kind == "file" else "directory"
            raise UsageError(f"{shown} is {name}, not a regular {wanted}; infoppo will not write there")
    if kind == "file" and stat.S_ISDIR(status.st_mode):
        raise UsageError(f"{shown} is a directory; give a file path")
    if kind == "dir" and not stat.S_ISDIR(status.st_mode):
        raise UsageError(f"{shown} is a file; give a directory (an existing one or a new path)")


def _refuse_inputs(
    target: Path,
    status: os.stat_result | None,
    inputs: Iterable[str | os.PathLike[str] | None],
    shown: str,
) -> None:
    for given in inputs:
        if given is None:
            continue
        source = Path(given).expanduser()
        same = source.resolve() == target.resolve()
        if not same and status is not None:
            with contextlib.suppress(OSError):
                same = os.path.samefile(source, target)  # hard links too
        if same:
            raise UsageError(f"{shown} is the command's own input {given}; choose another output path")


def refuse_inside_inputs(
    out_dir: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str] | None], option: str = "--out"
) -> None:
    """One :class:`UsageError` line when ``out_dir`` is an input (a model directory, a data file) or
    lies inside one: writing there would mix results into the command's own input."""
    target = Path(out_dir).expanduser().resolve()
    for given in inputs:
        if given is None:
            continue
        source = Path(given).expanduser()
        if not source.exists():
            continue  # a Hub id, or a label
        source = source.resolve()
        if target == source or source in target.parents:
            where = "is" if target == source else "is inside"
            raise UsageError(
                f"{option} {out_dir} {where} the command's own input {given}; "
                "choose an output directory outside it"
            )


def _refuse_unwritable(directory: Path, shown: str) -> None:
    """Probe the nearest existing directory by creating (and removing) a file in it: permission bits,
    read-only mounts and root's privileges all answer the same way."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{shown}: {existing} is a file, so no directory can be made there")
    try:
        fd, probe = tempfile.mkstemp(prefix=".infoppo-write-check.", dir=existing)
    except OSError as exc:
        raise UsageError(f"{shown}: cannot write in {existing} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    try:
        with atomic_writer(path) as handle:
            handle.write(text)
    except DiskFull as exc:
        raise DiskFull(exc.path, len(text.encode("utf-8"))) from None


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    try:
        with atomic_writer(path, "wb") as handle:
            handle.write(data)
    except DiskFull as exc:
        raise DiskFull(exc.path, len(data)) from None


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def follow_umask(directory: str | os.PathLike[str]) -> list[Path]:
    """Give every regular file of ``directory`` that a library wrote owner-only (``0600``, as a
    ``mkstemp``-then-rename writer leaves it) the mode a new file gets under the umask, as every other
    file infoppo writes has; returns the files changed."""
    wanted = 0o666 & ~_umask()
    changed = []
    for path in Path(directory).iterdir():
        status = path.lstat()
        if stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o600 != wanted:
            path.chmod(wanted)
            changed.append(path)
    return changed
