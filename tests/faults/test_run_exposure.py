"""Faults found by a hostile but fair user (issue "Nothing lost, nothing leaked, nothing wrong"):
a secret on disk, an open Ray, and Ray's leftovers. One real CPU run, watched while it trains.

* A planted ``WANDB_API_KEY`` reaches no file under Ray's session folder, the run directory or the
  terminal (Ray used to log it with the runtime environment; wandb logs offline here, no network).
* While it trains, every socket the run's processes listen on is bound to loopback.
* Ray's session folder is private (0700) while the run lives and removed when it ends.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

import psutil
import pytest
from cli_process import start_infoppo

pytestmark = pytest.mark.slow

SECRET = "sekret-1234-planted"
LOOPBACK = ("127.0.0.1", "::1")


@pytest.fixture(autouse=True)
def cached_task(task_cache):
    return task_cache


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _listening(processes: list[psutil.Process]) -> set[tuple[str, int, str]]:
    pids = {process.pid: process for process in processes}
    found = set()
    for connection in psutil.net_connections(kind="inet"):
        if connection.status == psutil.CONN_LISTEN and connection.pid in pids:
            try:
                name = pids[connection.pid].name()
            except psutil.NoSuchProcess:
                continue
            found.add((connection.laddr.ip, connection.laddr.port, name))
    return found


def _session_roots(before: set[Path]) -> set[Path]:
    return {path for path in Path("/tmp").glob("infoppo-ray-*")} - before


def _files_with(root: Path, text: bytes) -> list[Path]:
    hits = []
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and text in path.read_bytes():
                hits.append(path)
        except OSError:
            continue
    return hits


def test_a_run_leaks_no_secret_listens_on_loopback_only_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", SECRET)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    before = set(Path("/tmp").glob("infoppo-ray-*"))
    run = tmp_path / "run"
    process = start_infoppo(
        "train",
        "--preset",
        "tiny-cpu",
        "--steps",
        "2",
        "--eval-every",
        "2",
        "--eval-samples",
        "2",
        "--no-eval-before",
        "--output-dir",
        str(run),
    )
    watched, sessions, modes = set(), set(), set()
    root = psutil.Process(process.pid)
    while process.poll() is None:
        watched |= _listening(_tree(root))
        for session in _session_roots(before):
            sessions.add(session)
            with contextlib.suppress(FileNotFoundError):
                modes.add(stat.S_IMODE(session.stat().st_mode))
            assert not _files_with(session, SECRET.encode()), "the key reached Ray's session folder"
        time.sleep(0.5)
    out, err = process.communicate()
    assert process.returncode == 0, out[-3000:] + err[-3000:]

    assert watched, "no listening socket was seen while the run trained"
    exposed = sorted(entry for entry in watched if entry[0] not in LOOPBACK)
    assert not exposed, f"listening beyond loopback: {exposed}"
    assert sessions and modes == {0o700}
    assert not any(session.exists() for session in sessions)  # removed when the run ended
    assert SECRET not in out + err
    assert not _files_with(run, SECRET.encode())
    assert "offline" in out  # no network to wandb's server: the plan switched it to offline logging
    assert os.environ["WANDB_API_KEY"] == SECRET
