"""Faults found by a hostile user: a run that survives its user.

* ``kill -9`` of ``infoppo train`` after ``step 1/3`` left its launch process, Ray and the trainer
  training on: steps 2 and 3 were trained unseen, ``manifest.json`` stayed ``running``, and a
  ``--resume --dry-run`` said nothing of it. Now everything of the run stops within seconds, nothing
  more is trained, and the next command says the run was interrupted.
* While ``infoppo train ... --resume`` ran, the same command again started a second Ray and trainer
  on the same directory. Now one command holds a run directory at a time, and a second one is refused
  in one line naming the holder's pid.
* The same for ``infoppo sweep``: a killed sweep's local runs stop with it.

Real ``tiny-cpu`` runs, each command a child process as a user's shell starts it (the sweep's runs
are a stand-in that watches its owner as ``infoppo`` does).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from cli_process import run_infoppo, wait_for
from sweep_stand_in import write_prompts

from infoppo_cli.rundir import RunDir, read_manifest
from infoppo_cli.sweep.launcher import EXECUTABLE_ENV

pytestmark = pytest.mark.slow

TRAIN = ("train", "--preset", "tiny-cpu", "--method", "ppo", "--steps", "3", "--eval-every", "3")
TRAIN += ("--eval-samples", "2", "--no-eval-before")
STOPPED_WITHIN_S = 30.0
"""How long the run's processes may take to stop once their infoppo process is gone."""


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(
    run: Path, *more: str, out: Path | None = None, background: bool = False
) -> subprocess.Popen[bytes]:
    """``infoppo train`` in a session of its own (as a shell job), output to ``run``'s sibling file;
    ``background``: with SIGINT ignored, as a script's ``infoppo train ... &`` starts it."""
    command = [sys.executable, "-m", "infoppo_cli", *TRAIN, "--output-dir", str(run), *more]
    env = {**os.environ, "COLUMNS": "250"}
    with open(out or run.parent / f"{run.name}.out", "ab") as log:
        return subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=_ignore_sigint if background else None,
        )


def _command(run: Path, groups: set[int], *more: str) -> tuple[int, str]:
    """Run ``infoppo train`` on ``run`` to its end (two minutes at most): its exit code and output. Its
    process group joins ``groups``, to be killed whatever happens."""
    out = run.parent / f"{run.name}.second.out"
    out.unlink(missing_ok=True)
    process = _start(run, *more, out=out)
    groups.add(process.pid)  # its own session: the group of everything it starts in it
    try:
        code = process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"`infoppo train {' '.join(more)}` was not refused: it ran") from None
    return code, " ".join(out.read_text(errors="replace").split())


def _log(run: Path) -> str:
    return (run / "train.log").read_text(errors="replace") if (run / "train.log").exists() else ""


def _groups(processes: list[psutil.Process]) -> set[int]:
    groups = set()
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(process.pid))
    return groups


def _members(groups: set[int]) -> list[psutil.Process]:
    """The live processes of these process groups (zombies left for their parents are gone already)."""
    found = []
    for process in psutil.process_iter(["status"]):
        with contextlib.suppress(ProcessLookupError, psutil.Error):
            if os.getpgid(process.pid) in groups and process.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(process)
    return found


def _run_tree(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """The infoppo process and everything below it: launch process, Ray, trainer."""
    root = psutil.Process(process.pid)
    return [root, *root.children(recursive=True)]


def _kill_all(groups: set[int]) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def _survivors(groups: set[int], within: float) -> list[psutil.Process]:
    deadline = time.monotonic() + within
    while (left := _members(groups)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _steps(run: Path) -> list[str]:
    metrics = run / "metrics.jsonl"
    return metrics.read_text().splitlines() if metrics.exists() else []


def test_kill_9_of_the_cli_stops_its_training_and_the_next_command_knows(tmp_path, task_cache):
    run = tmp_path / "run"
    cli = _start(run)
    groups: set[int] = set()
    try:
        wait_for(lambda: "step 1/3" in _log(run) or cli.poll() is not None, timeout=900, what="step 1/3")
        assert cli.poll() is None, (tmp_path / "run.out").read_text()[-3000:]
        tree = _run_tree(cli)
        groups = _groups(tree)
        assert any("openrlhf_adapter.launch" in " ".join(p.cmdline()) for p in tree[1:])
        cli.send_signal(signal.SIGKILL)
        cli.wait()
        left = _survivors(groups, STOPPED_WITHIN_S)
        assert not left, f"still running after {STOPPED_WITHIN_S:.0f} s: {[p.name() for p in left]}"
    finally:
        _kill_all(groups)
    steps = len(_steps(run))
    time.sleep(2)
    assert len(_steps(run)) == steps <= 1, "a step was trained after its infoppo process died"
    log = _log(run)
    assert "step 2/3" not in log
    assert "interrupted" in log.splitlines()[-1]  # the launch process's last word on why it stopped

    dry = run_infoppo(*TRAIN, "--output-dir", str(run), "--resume", "--dry-run", timeout=300)
    said = " ".join((dry.stdout + dry.stderr).split())
    assert dry.returncode == 0, said[-3000:]
    assert f"{run}: the run was interrupted" in said and "--resume continues from" in said
    again = run_infoppo(*TRAIN, "--output-dir", str(run), "--dry-run", timeout=300)
    said = " ".join((again.stdout + again.stderr).split())
    assert again.returncode == 2 and "already holds a run that was interrupted" in said


def test_kill_of_a_cli_started_in_the_background_stops_its_training(tmp_path, task_cache):
    """A script's ``infoppo train ... &`` runs with SIGINT ignored, inherited by the launch process,
    which the CLI stops with SIGINT: a plain ``kill`` of the CLI left the run training to its end."""
    run = tmp_path / "run"
    cli = _start(run, background=True)
    groups: set[int] = set()
    try:
        wait_for(lambda: "step 1/3" in _log(run) or cli.poll() is not None, timeout=900, what="step 1/3")
        assert cli.poll() is None, (tmp_path / "run.out").read_text()[-3000:]
        groups = _groups(_run_tree(cli))
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=120) != 0
        left = _survivors(groups, STOPPED_WITHIN_S)
        assert not left, f"still running after kill: {[p.name() for p in left]}"
    finally:
        _kill_all(groups)
    assert "step 2/3" not in _log(run) and len(_steps(run)) <= 1, "it trained on after its kill"
    assert read_manifest(RunDir(run)).get("status") == "interrupted"


def test_a_second_command_on_a_run_in_use_is_refused_naming_its_pid(tmp_path, task_cache):
    run = tmp_path / "run"
    groups: set[int] = set()
    try:
        first = _start(run)  # a run to resume: stopped as soon as it has started
        wait_for(lambda: (run / "manifest.json").exists() or first.poll() is not None, timeout=300)
        groups |= _groups(_run_tree(first))
        first.send_signal(signal.SIGKILL)
        first.wait()

        resumed = _start(run, "--resume")
        wait_for(
            lambda: "infoppo train resumed" in _log(run) or resumed.poll() is not None,
            timeout=300,
            what="the resume to start",
        )
        assert resumed.poll() is None, (tmp_path / "run.out").read_text()[-3000:]
        groups |= _groups(_run_tree(resumed))
        for extra in (("--resume",), (), ("--resume", "--dry-run")):  # the same resume, a new run
            code, said = _command(run, groups, *extra)
            assert code == 2, said[-3000:]
            assert f"in use by another infoppo command (pid {resumed.pid})" in said
            assert "Traceback" not in said

        wait_for(  # a line of a Ray worker's, "(Actor pid=N) ...": Ray and the trainer are up
            lambda: "pid=" in _log(run).split("infoppo train resumed")[-1] or resumed.poll() is not None,
            timeout=600,
            what="the resumed run's Ray workers",
        )
        groups |= _groups(_run_tree(resumed))
        resumed.send_signal(signal.SIGINT)  # Ctrl-C: reaches its launch process, which stops Ray
        assert resumed.wait(timeout=120) != 0
        left = _survivors(groups, STOPPED_WITHIN_S)
        assert not left, f"still running after Ctrl-C: {[p.name() for p in left]}"
    finally:
        _kill_all(groups)


OWNED_STAND_IN = """
import os, sys, time
from pathlib import Path
from infoppo_cli.openrlhf_adapter.lifeline import watch_owner
watch_owner()  # as `infoppo`'s entry point does
out = Path(sys.argv[sys.argv.index("--output-dir") + 1])
out.mkdir(parents=True, exist_ok=True)
(out / "pid").write_text(str(os.getpid()))
time.sleep(600)
"""


def test_a_killed_sweep_stops_its_local_runs(tmp_path):
    stand_in = tmp_path / "infoppo.py"
    stand_in.write_text(OWNED_STAND_IN)
    env = {**os.environ, EXECUTABLE_ENV: f"{sys.executable} {stand_in}"}
    out = tmp_path / "sweep"
    argv = [sys.executable, "-m", "infoppo_cli", "sweep", "gamma", "--values", "0.999", "--out", str(out)]
    argv += ["--data", str(write_prompts(tmp_path / "prompts.jsonl")), "--eval-bench", "none"]
    sweep = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _pids(out), timeout=120, what="the sweep's first run")
        run = _pids(out)[0]
        assert psutil.pid_exists(run)
        sweep.send_signal(signal.SIGKILL)
        sweep.wait()
        wait_for(
            lambda: not psutil.pid_exists(run) or psutil.Process(run).status() == "zombie", 10, "the run"
        )
    finally:
        sweep.kill()
        for pid in _pids(out):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _pids(out: Path) -> list[int]:
    """The pids the stand-in runs of a sweep wrote."""
    return [int(text) for path in out.rglob("pid") if (text := path.read_text())]
