"""``train/run.py``'s hold on its run: one command per run directory, a run whose infoppo process died
is told as interrupted, and SIGTERM stops a run as Ctrl-C does. The launch is faked (a child process
that stands for OpenRLHF); the lock, the checks and the manifest are the product's."""

from __future__ import annotations

import json
import os
import signal
import threading

import pytest
from fake_launch import fake_plan

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import RunDir
from infoppo_cli.rundir.lock import RUN_LOCK_FILE, run_lock
from infoppo_cli.train.run import check_launch, run_training


def _died_while_training(tmp_path, monkeypatch) -> RunDir:
    """A run whose infoppo process (pid 4242) was killed while it trained: its manifest still says
    ``running``, its lock file names the dead holder, nobody holds the lock."""
    assert run_training(fake_plan(tmp_path, monkeypatch)) == 0
    run = RunDir(tmp_path / "run")
    manifest = json.loads(run.manifest.read_text())
    run.manifest.write_text(json.dumps({**manifest, "status": "running"}))
    (run.path / RUN_LOCK_FILE).write_text("pid 4242\n")
    return run


def test_a_run_directory_in_use_is_refused_naming_the_holder(tmp_path, monkeypatch):
    assert run_training(fake_plan(tmp_path, monkeypatch)) == 0
    held = run_lock(RunDir(tmp_path / "run"))
    assert held.acquire()  # another infoppo command, for the lock (its open file is another one)
    try:
        for request in ({"resume": True, "steps": 4000}, {}):
            plan = fake_plan(tmp_path, monkeypatch, **request)
            with pytest.raises(
                UsageError, match=f"in use by another infoppo command \\(pid {os.getpid()}\\)"
            ):
                check_launch(plan)
            with pytest.raises(UsageError, match=f"pid {os.getpid()}"):
                run_training(plan)
    finally:
        held.release()
    assert run_training(fake_plan(tmp_path, monkeypatch, resume=True, steps=4000)) == 0


def test_the_launch_process_holds_the_lock_too(tmp_path, monkeypatch):
    script = (
        "from pathlib import Path; from infoppo_cli.rundir.lock import lock_holder; "
        f"raise SystemExit(0 if lock_holder(Path({str(tmp_path / 'run')!r})) else 7)"
    )
    assert run_training(fake_plan(tmp_path, monkeypatch, script)) == 0
    assert (tmp_path / "run" / RUN_LOCK_FILE).read_text() == ""  # released cleanly at the end


def test_a_run_whose_process_died_is_told_as_interrupted(tmp_path, monkeypatch):
    _died_while_training(tmp_path, monkeypatch)
    with pytest.raises(
        UsageError, match=r"already holds a run that was interrupted \(its infoppo process, pid 4242,"
    ):
        check_launch(fake_plan(tmp_path, monkeypatch))
    resumed = fake_plan(tmp_path, monkeypatch, resume=True, steps=4000)
    check_launch(resumed)
    note = (
        f"{tmp_path / 'run'}: the run was interrupted (its infoppo process, pid 4242, died while it trained)"
    )
    assert f"{note}; --resume continues from step 0 (it saved no checkpoint)" in resumed.warnings
    assert run_training(resumed) == 0
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "finished"


def test_sigterm_stops_the_run_as_ctrl_c_does(tmp_path, monkeypatch):
    script = "import time; print('training', flush=True); time.sleep(60)"
    plan = fake_plan(tmp_path, monkeypatch, script)
    log = tmp_path / "run" / "train.log"
    timer = threading.Timer(0.1, lambda: None)

    def terminate_once_training() -> None:
        if log.exists() and "training" in log.read_text():
            os.kill(os.getpid(), signal.SIGTERM)  # a batch scheduler's stop, to this process
        else:
            _again()

    def _again() -> None:
        nonlocal timer
        timer = threading.Timer(0.1, terminate_once_training)
        timer.start()

    before = signal.getsignal(signal.SIGTERM)  # the default, or a handler an earlier test's Ray left
    _again()
    try:
        code = run_training(plan)
    finally:
        timer.cancel()
    record = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert record["status"] == "interrupted" and code != 0  # the launch got SIGINT and stopped
    assert "--- infoppo train interrupted" in log.read_text()
    assert signal.getsignal(signal.SIGTERM) is before  # put back
