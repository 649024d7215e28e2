"""Faults found by a hostile but fair user ("nothing lost, nothing leaked, nothing wrong"):
a secret on disk, an open Ray, and Ray's leftovers. One real CPU run, watched while it trains
(``watched_run``; the last-eval faults check the same run).

* A planted ``WANDB_API_KEY`` (and Ray token) reaches no file under Ray's session folder, the run
  directory or the terminal (Ray used to log the key with the runtime environment; wandb logs offline
  here, no network).
* While it trains, a Ray client without the run's token is refused, and Ray's own servers (its
  dashboard, its Prometheus metrics servers, GCS, raylet, agents) listen on loopback only. (torch's
  rendezvous store, in the training workers, listens on every interface: ``local_ray.py``; this test
  does not pretend otherwise.)
* Of infoppo's ``INFOPPO_*`` variables, one the workers do not read reaches no file of Ray's.
* Ray's session folder is private (0700) while the run lives and removed when it ends, also when a
  SIGTERM stops the run while it starts.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest
from cli_process import start_infoppo
from planned_run import assert_the_planned_program_ran
from watched_run import (
    DASHBOARD_PORT,
    LOOPBACK,
    SECRET,
    TOKEN,
    command,
    files_with,
    ray_servers,
    session_roots,
    tree,
)

from infoppo_cli.rundir import read_metrics

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def cached_task(task_cache):
    return task_cache


def test_a_run_leaks_no_secret_refuses_strangers_and_leaves_nothing(exposed_run):
    seen = exposed_run
    assert seen.returncode == 0, seen.out[-3000:] + seen.err[-3000:]
    assert not seen.planted_in_sessions, (
        f"planted values reached Ray's session folder: {seen.planted_in_sessions}"
    )
    assert seen.listening, "no listening socket was seen while the run trained"
    web = [a for a in seen.listening if a[1] == DASHBOARD_PORT and a[0] not in LOOPBACK]
    assert not web, f"Ray's dashboard served beyond loopback: {web}"
    servers = ray_servers(seen.listening)
    assert any(name == "gcs_server" for name in servers.values())
    open_servers = {
        address: name
        for address, name in servers.items()
        if address[0].removeprefix("::ffff:") not in LOOPBACK
    }
    assert not open_servers, f"Ray's servers listen beyond loopback: {open_servers}"
    assert seen.stranger_refused is True, "a Ray client without the run's token was let in"
    assert seen.sessions and seen.session_modes == {0o700}
    assert not any(session.exists() for session in seen.sessions)  # removed when the run ended
    assert SECRET not in seen.out + seen.err and TOKEN not in seen.out + seen.err
    assert not files_with(seen.run, SECRET.encode()) and not files_with(seen.run, TOKEN.encode())
    assert "offline" in seen.out  # no network to wandb's server: the plan switched it to offline logging
    assert seen.wandb_key_after == SECRET  # the user's environment is left as it was
    assert_the_planned_program_ran("info-clip", read_metrics(seen.run / "metrics.jsonl"))


def test_a_sigterm_while_the_run_starts_leaves_no_ray_session_folder(tmp_path):
    """Python's default SIGTERM ended the launch process before its clean-up: its private Ray session
    folder stayed in /tmp."""
    before = set(Path("/tmp").glob("infoppo-ray-*"))
    process = start_infoppo(
        "train", "--preset", "tiny-cpu", "--steps", "1", "--output-dir", str(tmp_path / "run")
    )
    root = psutil.Process(process.pid)
    deadline = time.monotonic() + 300
    launch, sessions = None, set()
    while time.monotonic() < deadline and process.poll() is None and not (launch and sessions):
        sessions |= session_roots(before, root)
        launched = [p for p in tree(root)[1:] if "openrlhf_adapter.launch" in command(p)]
        launch = launched[0] if launched else None
        time.sleep(0.05)
    assert launch is not None and sessions, "the run never started its Ray"
    launch.send_signal(signal.SIGTERM)
    launch.wait(timeout=120)
    process.communicate(timeout=300)
    assert not any(session.exists() for session in sessions), "the Ray session folder was left behind"
