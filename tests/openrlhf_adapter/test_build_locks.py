"""A torch extension build lock left by a killed worker hung every later run on the machine: the first
DeepSpeed worker waited in ``FileBaton.wait`` forever (seen after a sweep was stopped during a run's
start). Each run's workers now remove such a lock first, and only such a lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infoppo_cli.openrlhf_adapter import build_locks
from infoppo_cli.openrlhf_adapter.build_locks import NETWORK_STALE_S, SETTLE_S, clear_stale_build_locks


@pytest.fixture
def local_disk(monkeypatch):
    monkeypatch.setattr(build_locks, "filesystem_type", lambda path: "ext4")


def a_lock(root: Path, age_s: float, op: str = "deepspeed_shm_comm") -> Path:
    folder = root / "py311_cpu" / op
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / "lock"
    lock.touch()
    stamp = time.time() - age_s
    os.utime(lock, (stamp, stamp))
    return lock


def test_a_lock_a_killed_holder_left_is_removed_and_torch_s_wait_returns(tmp_path, local_disk, capsys):
    """The fault itself: a process takes torch's own baton in an op's build folder and is killed."""
    folder = tmp_path / "py311_cpu" / "fused_adam"
    folder.mkdir(parents=True)
    take = "import sys, time; from torch.utils.file_baton import FileBaton\n"
    take += "assert FileBaton(sys.argv[1]).try_acquire(); print('held', flush=True); time.sleep(60)"
    holder = subprocess.Popen(
        [sys.executable, "-c", take, str(folder / "lock")], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)  # as Ray stops an actor
    holder.wait()
    assert (folder / "lock").exists()  # what hung the next run
    stamp = time.time() - SETTLE_S
    os.utime(folder / "lock", (stamp, stamp))

    assert clear_stale_build_locks(tmp_path) == [folder / "lock"]
    assert not (folder / "lock").exists()
    from torch.utils.file_baton import FileBaton

    FileBaton(str(folder / "lock"), wait_seconds=0.01).wait()  # returns at once now
    said = capsys.readouterr().err
    assert f"removed {folder / 'lock'}" in said and "waited on it forever" in said


def test_a_lock_whose_build_runs_is_kept(tmp_path, local_disk):
    """ninja and the compilers run in the op's folder while its holder builds."""
    lock = a_lock(tmp_path, age_s=600)  # a long build
    builder = subprocess.Popen(["sleep", "60"], cwd=lock.parent)
    try:
        assert clear_stale_build_locks(tmp_path) == []
    finally:
        builder.kill()
        builder.wait()
    assert lock.exists()


def test_a_young_lock_is_looked_at_again_once_it_is_old_enough(tmp_path, local_disk):
    """Its holder may be about to start ninja; by then it has, or the lock is stale."""
    lock = a_lock(tmp_path, age_s=0)
    slept = []
    now = lock.stat().st_mtime + 2.0
    assert clear_stale_build_locks(tmp_path, now=lambda: now, sleep=slept.append) == [lock]
    assert slept == [pytest.approx(SETTLE_S - 2.0)]


def test_a_lock_released_and_taken_again_while_waiting_is_kept(tmp_path, local_disk):
    lock = a_lock(tmp_path, age_s=0)

    def taken_again(seconds: float) -> None:
        lock.unlink()
        lock.touch()  # another holder's: a new file

        stamp = time.time() + 5
        os.utime(lock, (stamp, stamp))

    assert clear_stale_build_locks(tmp_path, sleep=taken_again) == []
    assert lock.exists()


def test_on_a_network_filesystem_only_a_lock_older_than_any_build_is_stale(tmp_path, monkeypatch):
    """A build on another machine sharing the folder cannot be seen from here."""
    monkeypatch.setattr(build_locks, "filesystem_type", lambda path: "nfs4")
    young, old = a_lock(tmp_path, age_s=60, op="young"), a_lock(tmp_path, age_s=NETWORK_STALE_S + 1, op="old")
    assert clear_stale_build_locks(tmp_path, sleep=lambda s: pytest.fail("no waiting on a network disk")) == [
        old
    ]
    assert young.exists() and not old.exists()


def test_no_locks_or_no_folder_is_nothing_to_do(tmp_path):
    assert clear_stale_build_locks(tmp_path / "absent") == []
    (tmp_path / "py311_cpu" / "fused_adam").mkdir(parents=True)
    assert clear_stale_build_locks(tmp_path) == []


def test_the_root_is_torch_s(monkeypatch, tmp_path):
    from torch.utils.cpp_extension import get_default_build_root

    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    assert build_locks.extensions_root() == Path(get_default_build_root())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert build_locks.extensions_root() == Path(get_default_build_root()) == tmp_path / "torch_extensions"
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "mine"))
    assert build_locks.extensions_root() == tmp_path / "mine"


def test_the_filesystem_of_a_path_is_its_nearest_mount_s(tmp_path):
    table = tmp_path / "mounts"
    table.write_text(
        "overlay / overlay rw 0 0\nserver:/home /home nfs4 rw 0 0\ntmpfs /home/x\\040y tmpfs rw 0 0\n"
    )
    assert build_locks.filesystem_type(Path("/home/me/.cache"), table) == "nfs4"
    assert build_locks.filesystem_type(Path("/home/x y/z"), table) == "tmpfs"
    assert build_locks.filesystem_type(Path("/homework"), table) == "overlay"
    assert build_locks.filesystem_type(Path("/"), tmp_path / "none") is None
