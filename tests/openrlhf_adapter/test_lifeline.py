"""A child process that dies with its owner, however the owner dies; the launch process's stop.

Each test starts an owner process (standing for ``infoppo train`` or ``infoppo sweep``), which starts
its child with :func:`start_owned`; the owner is then killed with SIGKILL, which it cannot handle."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infoppo_cli.openrlhf_adapter.lifeline import OWNER_ENV, run_processes, watch_owner

pytestmark = pytest.mark.slow

OWNER = """
import sys, time
from infoppo_cli.openrlhf_adapter.lifeline import start_owned
child = start_owned(sys.argv[1:])
print(child.pid, flush=True)
time.sleep(600)
"""

CHILD = """
import os, sys, time
from pathlib import Path
from infoppo_cli.openrlhf_adapter.lifeline import watch_owner
owner = watch_owner()
Path(sys.argv[1]).write_text(f"{os.getpid()} {owner.pid} {os.environ.get('INFOPPO_OWNER')}")
time.sleep(600)
"""

LAUNCH = """
import os, subprocess, sys, time
from pathlib import Path
from infoppo_cli.openrlhf_adapter.lifeline import stop_run_on_owner_death
from infoppo_cli.rundir import RunDir, write_manifest
run = Path(sys.argv[1])
run.mkdir(exist_ok=True)
write_manifest(RunDir(run), {"status": "running"})
stop_run_on_owner_death(run, lambda: (run / "cleaned").write_text("yes"))
import signal
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))  # as ray.init does
in_group = subprocess.Popen(["sleep", "600"])  # as Ray's head processes: in the launch's group
own_session = subprocess.Popen(["sleep", "600"], start_new_session=True)  # out of it, still below
(run / "pids").write_text(f"{os.getpid()} {in_group.pid} {own_session.pid}")
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _written(path: Path) -> bool:
    return path.exists() and bool(path.read_text())


def _wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _start_owner(*child: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", OWNER, *child], stdout=subprocess.PIPE, text=True)


def _kill(*pids: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_an_owned_child_takes_sigint_though_a_background_shell_ignored_it(tmp_path):
    """A script's ``infoppo train ... &`` starts with SIGINT ignored, which its children inherit; its
    owner's SIGINT must stop an owned child all the same (it trained on before)."""
    said = tmp_path / "child"
    ignoring = subprocess.Popen(
        [sys.executable, "-c", OWNER, sys.executable, "-c", CHILD, str(said)],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as the shell does
    )
    try:
        assert _wait(lambda: _written(said), 60)
        pid = int(said.read_text().split()[0])
        ignored = int(Path(f"/proc/{pid}/status").read_text().split("SigIgn:")[1].split()[0], 16)
        assert not ignored & (1 << (signal.SIGINT - 1))
        os.kill(pid, signal.SIGINT)
        assert _wait(lambda: not _alive(pid), 10), "the owned child ignored its owner's SIGINT"
    finally:
        ignoring.kill()
        if said.exists():
            _kill(int(said.read_text().split()[0]))


@pytest.mark.parametrize("through_a_shell", [False, True], ids=["child", "behind-a-shell"])
def test_an_owned_child_stops_when_its_owner_is_killed(tmp_path, through_a_shell):
    """Its parent's death signal stops a direct child; behind a wrapper shell (which outlives the owner)
    only the lifeline tells it."""
    said = tmp_path / "child"
    child = [sys.executable, "-c", CHILD, str(said)]
    if through_a_shell:
        child = ["sh", "-c", '"$@"; true', "sh", *child]  # `; true`: the shell waits, does not exec
    owner = _start_owner(*child)
    try:
        assert _wait(lambda: _written(said), 60)
        pid, owner_pid, inherited = said.read_text().split()
        assert int(owner_pid) == owner.pid and inherited == "None"  # not passed on to its own children
        assert _alive(int(pid))
        owner.kill()
        owner.wait()
        assert _wait(lambda: not _alive(int(pid)), 10), "the child outlived its owner"
    finally:
        owner.kill()
        if said.exists():
            _kill(int(said.read_text().split()[0]))


def test_the_launch_process_stops_its_whole_run_when_its_owner_dies(tmp_path):
    run = tmp_path / "run"
    owner = _start_owner(sys.executable, "-c", LAUNCH, str(run))
    pids: list[int] = []
    try:
        assert _wait(lambda: _written(run / "pids"), 60)
        pids = [int(pid) for pid in (run / "pids").read_text().split()]
        assert all(_alive(pid) for pid in pids)
        owner.kill()
        owner.wait()
        assert _wait(lambda: not any(_alive(pid) for pid in pids), 15), "a process of the run lived on"
    finally:
        owner.kill()
        _kill(*pids)
    last = (run / "train.log").read_text().splitlines()[-1]
    assert last.startswith("--- infoppo train interrupted") and f"pid {owner.pid}" in last
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert (run / "cleaned").read_text() == "yes"  # the embedded Ray's session folder, in launch.py


def test_a_process_nobody_owns_watches_nothing(monkeypatch):
    monkeypatch.delenv(OWNER_ENV, raising=False)
    assert watch_owner() is None
    monkeypatch.setenv(OWNER_ENV, "not-a-pid")
    assert watch_owner() is None and OWNER_ENV not in os.environ


def test_the_run_processes_are_the_group_and_the_descendants(tmp_path):
    leader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            LAUNCH.replace("stop_run_on_owner_death(", "(lambda *a: None)("),
            str(tmp_path),
        ],
        start_new_session=True,
    )
    pids: list[int] = []
    try:
        assert _wait(lambda: _written(tmp_path / "pids"), 60)
        pids = [int(pid) for pid in (tmp_path / "pids").read_text().split()]
        assert run_processes(leader.pid) == set(pids[1:])
        assert os.getpid() not in run_processes(leader.pid)
    finally:
        _kill(leader.pid, *pids)
        leader.wait()
