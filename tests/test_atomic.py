"""Atomic writes: readers see the old file or the new one, never a torn one."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.atomic import atomic_write_json, atomic_write_text, atomic_writer


def test_writes_and_replaces(tmp_path):
    path = tmp_path / "deep" / "out.json"
    atomic_write_json(path, {"a": 1})
    atomic_write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]  # no temporary left behind


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "metrics.json"
    atomic_write_text(path, "old")
    with pytest.raises(RuntimeError), atomic_writer(path) as handle:
        handle.write("half of the new")
        raise RuntimeError("crash mid-write")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def test_new_files_get_the_umask_permissions_and_existing_files_keep_theirs(tmp_path):
    import os
    import stat

    previous = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "new.txt", "x")
        assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        kept.chmod(0o604)
        atomic_write_text(kept, "new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and kept.read_text() == "new"
    finally:
        os.umask(previous)


def test_a_killed_writers_temporary_is_removed_and_a_live_ones_kept(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead_pid = int(dead.stdout)
    host = socket.gethostname()
    stale = tmp_path / f".out.jsonl.{dead_pid}@{host}.abc123.tmp"
    live = tmp_path / f".out.jsonl.{os.getpid()}@{host}.def456.tmp"
    other_host = tmp_path / f".out.jsonl.{dead_pid}@elsewhere.example.ghi789.tmp"
    for path in (stale, live, other_host):
        path.write_text("partial")
    atomic_write_text(tmp_path / "out.jsonl", "done\n")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["out.jsonl", live.name, other_host.name])


def test_durable_writes_fsync_the_directory(tmp_path, monkeypatch):
    from infoppo_cli import atomic

    synced = []
    monkeypatch.setattr(atomic, "fsync_directory", synced.append)
    atomic_write_text(tmp_path / "a.json", "1")
    with atomic_writer(tmp_path / "b.json", durable=False) as handle:
        handle.write("2")
    assert synced == [tmp_path]


class TestCheckOutputTarget:
    def check(self, path, **kwargs):
        from infoppo_cli.atomic import check_output_target

        return check_output_target(path, **kwargs)

    def refused(self, path, fragment, **kwargs):
        from infoppo_cli.errors import UsageError

        with pytest.raises(UsageError, match=fragment):
            self.check(path, **kwargs)

    def test_accepts_new_and_existing_targets_of_the_right_kind(self, tmp_path):
        (tmp_path / "file").write_text("x")
        assert self.check(tmp_path / "file") == tmp_path / "file"
        assert self.check(tmp_path / "new" / "deeper" / "file.jsonl") == tmp_path / "new/deeper/file.jsonl"
        assert self.check(tmp_path, kind="dir") == tmp_path
        assert self.check(tmp_path / "newdir", kind="dir") == tmp_path / "newdir"
        assert not (tmp_path / "new").exists() and not (tmp_path / "newdir").exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # the write probe is gone

    def test_refuses_fifo_socket_and_device(self, tmp_path):
        import os
        import socket

        os.mkfifo(tmp_path / "fifo")
        self.refused(tmp_path / "fifo", "FIFO")
        self.refused(tmp_path / "fifo", "FIFO", kind="dir")
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(tmp_path / "sock"))
        try:
            self.refused(tmp_path / "sock", "socket")
        finally:
            server.close()
        self.refused("/dev/null", "character device")
        (tmp_path / "link").symlink_to("/dev/null")
        self.refused(tmp_path / "link", "character device")

    def test_refuses_the_wrong_kind(self, tmp_path):
        (tmp_path / "file").write_text("x")
        self.refused(tmp_path, "is a directory; give a file path")
        self.refused(tmp_path / "file", "is a file; give a directory", kind="dir")
        self.refused(tmp_path / "file" / "below.jsonl", "is a file, so no directory")

    def test_refuses_the_commands_own_input_by_path_link_or_hard_link(self, tmp_path):
        import os

        source = tmp_path / "source.jsonl"
        source.write_text("{}\n")
        self.refused(source, "own input", inputs=[source])
        self.refused(tmp_path / "." / "source.jsonl", "own input", inputs=[None, str(source)])
        (tmp_path / "soft").symlink_to(source)
        self.refused(tmp_path / "soft", "own input", inputs=[source])
        os.link(source, tmp_path / "hard")
        self.refused(tmp_path / "hard", "own input", inputs=[source])
        assert self.check(tmp_path / "other.jsonl", inputs=[source]) == tmp_path / "other.jsonl"

    def test_refuses_an_unwritable_location(self, tmp_path):
        self.refused("/sys/infoppo-test/out.jsonl", "cannot write in /sys")
        self.refused("/proc/infoppo-test", "cannot write in /proc", kind="dir")


def test_files_a_library_left_owner_only_follow_the_umask(tmp_path):
    import os
    import stat

    from infoppo_cli.atomic import follow_umask

    weights, kept = tmp_path / "model.safetensors", tmp_path / "private.key"
    weights.write_bytes(b"w")
    weights.chmod(0o600)
    kept.write_bytes(b"k")
    kept.chmod(0o640)  # a deliberate mode other than 0600 is left alone
    old = os.umask(0o022)
    try:
        assert follow_umask(tmp_path) == [weights]
    finally:
        os.umask(old)
    assert stat.S_IMODE(weights.stat().st_mode) == 0o644 and stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_a_full_disk_keeps_the_old_file_and_says_where_and_how_much(tmp_path, monkeypatch):
    import os

    from infoppo_cli.atomic import DiskFull
    from infoppo_cli.errors import InfoppoError

    path = tmp_path / "data" / "dapo-math-17k.jsonl"
    atomic_write_text(path, "old")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DiskFull) as info:
        atomic_write_text(path, "x" * 2_500_000)
    assert path.read_text() == "old" and [p.name for p in path.parent.iterdir()] == [path.name]
    message = str(info.value)
    assert message.startswith(f"no space left on the device of {path}: it needs about 2.5 MB, ")
    assert isinstance(info.value, InfoppoError) and info.value.exit_code == 1
    assert isinstance(info.value, OSError) and info.value.errno == 28  # callers that handle OSError still do
