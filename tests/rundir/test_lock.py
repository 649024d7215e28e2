"""``RUN/.infoppo.lock``: one holder at a time, shared with a child it is given, never stale."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from infoppo_cli.rundir import RunDir, write_manifest
from infoppo_cli.rundir.lock import RUN_LOCK_FILE, last_holder, lock_holder, run_lock, run_status

HOLD = """
import sys, time
from pathlib import Path
from infoppo_cli.rundir import RunDir
from infoppo_cli.rundir.lock import run_lock
lock = run_lock(RunDir(Path(sys.argv[1])))
assert lock.acquire()
Path(sys.argv[1], "held").write_text("yes")
time.sleep(600)
"""


def test_one_holder_at_a_time_and_nothing_left_after_a_clean_release(tmp_path):
    run = RunDir(tmp_path / "run")
    assert lock_holder(run.path) is None  # no directory yet: nobody holds it, nothing is created
    assert not run.path.exists()
    first, second = run_lock(run), run_lock(run)
    assert first.acquire()
    assert not second.acquire()
    assert second.holder() == lock_holder(run.path) == f"pid {os.getpid()}"
    first.release()
    assert lock_holder(run.path) is None and last_holder(run) is None
    assert second.acquire()
    second.release()


def test_a_child_given_the_lock_holds_it_after_its_parent_lets_go(tmp_path):
    run = RunDir(tmp_path)
    lock = run_lock(run)
    assert lock.acquire()
    child = subprocess.Popen(["sleep", "600"], pass_fds=(lock.fileno(),))
    try:
        lock.release()
        assert lock_holder(run.path) is not None
        assert not run_lock(run).acquire()
    finally:
        child.kill()
        child.wait()
    assert lock_holder(run.path) is None


@pytest.mark.slow
def test_a_holder_killed_with_sigkill_leaves_no_lock_but_its_pid(tmp_path):
    run = RunDir(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)])
    deadline = time.monotonic() + 60
    while not (tmp_path / "held").exists():
        assert time.monotonic() < deadline and holder.poll() is None
        time.sleep(0.05)
    write_manifest(run, {"status": "running"})
    assert lock_holder(run.path) == f"pid {holder.pid}"
    assert run_status(run, "running") == "running"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert lock_holder(run.path) is None
    assert last_holder(run) == f"pid {holder.pid}"  # who died holding it
    assert run_status(run, "running") == "interrupted"  # a run recorded running that nobody runs
    assert run_status(run, "finished") == "finished"
    lock = run_lock(run)
    assert lock.acquire() and lock.previous == f"pid {holder.pid}"
    lock.release()
    assert (tmp_path / RUN_LOCK_FILE).read_text() == ""
