"""Faults found by a hostile but fair user (issue "Nothing lost, nothing leaked, nothing wrong"):
a secret on disk, an open Ray, and Ray's leftovers. One real CPU run, watched while it trains.

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

import contextlib
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from cli_process import start_infoppo
from planned_run import assert_the_planned_program_ran

from infoppo_cli.rundir import read_metrics

pytestmark = pytest.mark.slow

SECRET = "sekret-1234-planted"
TOKEN = "ray-token-5678-planted"
PLANTED_SETTING = "private-setting-9012-planted"
RAY_SERVERS = ("gcs_server", "raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent")
RAY_SCRIPTS = ("ray/dashboard/", "ray/autoscaler/", "ray/_private/log_monitor")
"""Ray's own server processes, by name or by the script they run."""


def _ray_servers(watched: dict[tuple[str, int], tuple[str, str]]) -> dict[tuple[str, int], str]:
    return {
        address: name
        for address, (name, command) in watched.items()
        if name in RAY_SERVERS or any(script in command for script in RAY_SCRIPTS)
    }


LOOPBACK = ("127.0.0.1", "::1")
DASHBOARD_PORT = 8265


def _unauthenticated_client_refused(port: int) -> bool:
    """A local client without the token (one elsewhere cannot reach loopback at all) is refused for it.
    Ray's client turns 127.0.0.1 into the machine's address unless its single-machine switch is off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    probe = f"import ray; ray.init(address='127.0.0.1:{port}'); print('CONNECTED')"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    return done.returncode != 0 and "CONNECTED" not in done.stdout and "Authentication" in done.stderr


@pytest.fixture(autouse=True)
def cached_task(task_cache):
    return task_cache


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _listening(processes: list[psutil.Process]) -> dict[tuple[str, int], tuple[str, str]]:
    """``(address, port) -> (process name, command line)`` of every listening socket of ``processes``."""
    pids = {process.pid: process for process in processes}
    found = {}
    for connection in psutil.net_connections(kind="inet"):
        if connection.status == psutil.CONN_LISTEN and connection.pid in pids:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                process = pids[connection.pid]
                owner = (process.name(), " ".join(process.cmdline()))
                found[(connection.laddr.ip, connection.laddr.port)] = owner
    return found


SESSION_ROOT = re.compile(r"/tmp/infoppo-ray-\w+")


def _command(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
        return " ".join(process.cmdline())
    return ""


def _session_roots(before: set[Path], run: psutil.Process) -> set[Path]:
    """This run's Ray session folders (its Ray processes name theirs: other runs may start beside it)."""
    named = {Path(found) for process in _tree(run) for found in SESSION_ROOT.findall(_command(process))}
    return {path for path in Path("/tmp").glob("infoppo-ray-*") if path in named} - before


def _files_with(root: Path, text: bytes) -> list[Path]:
    """Files under ``root`` that hold ``text``; a folder or file that vanishes while it is read (Ray's
    session folder is removed as the run ends) is skipped, as os.walk skips it."""
    hits = []
    paths = (Path(folder) / name for folder, _, names in os.walk(root) for name in names)
    for path in paths:
        try:
            if path.is_file() and not path.is_symlink() and text in path.read_bytes():
                hits.append(path)
        except OSError:
            continue
    return hits


def test_a_run_leaks_no_secret_refuses_strangers_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", SECRET)
    monkeypatch.setenv("RAY_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("INFOPPO_PLANTED_SETTING", PLANTED_SETTING)  # no worker reads it
    monkeypatch.delenv("WANDB_MODE", raising=False)
    before = set(Path("/tmp").glob("infoppo-ray-*"))
    run = tmp_path / "run"
    process = start_infoppo(
        "train",
        "--preset",
        "tiny-cpu",
        "--method",
        "info-clip",
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
    watched: dict[tuple[str, int], tuple[str, str]] = {}
    sessions, modes, refused = set(), set(), None
    root = psutil.Process(process.pid)
    while process.poll() is None:
        watched |= _listening(_tree(root))
        gcs = [port for (_, port), (name, _) in watched.items() if name == "gcs_server"]
        if refused is None and gcs and process.poll() is None:
            refused = _unauthenticated_client_refused(gcs[0])
        for session in _session_roots(before, root):
            sessions.add(session)
            with contextlib.suppress(FileNotFoundError):
                modes.add(stat.S_IMODE(session.stat().st_mode))
            for planted in (SECRET, TOKEN, PLANTED_SETTING):
                assert not _files_with(session, planted.encode()), f"{planted} reached Ray's session folder"
        time.sleep(0.5)
    out, err = process.communicate()
    assert process.returncode == 0, out[-3000:] + err[-3000:]

    assert watched, "no listening socket was seen while the run trained"
    web = [address for address in watched if address[1] == DASHBOARD_PORT and address[0] not in LOOPBACK]
    assert not web, f"Ray's dashboard served beyond loopback: {web}"
    servers = _ray_servers(watched)
    assert any(name == "gcs_server" for name in servers.values())
    open_servers = {
        address: name
        for address, name in servers.items()
        if address[0].removeprefix("::ffff:") not in LOOPBACK
    }
    assert not open_servers, f"Ray's servers listen beyond loopback: {open_servers}"
    assert refused is True, "a Ray client without the run's token was let in"
    assert sessions and modes == {0o700}
    assert not any(session.exists() for session in sessions)  # removed when the run ended
    assert SECRET not in out + err and TOKEN not in out + err
    assert not _files_with(run, SECRET.encode()) and not _files_with(run, TOKEN.encode())
    assert "offline" in out  # no network to wandb's server: the plan switched it to offline logging
    assert os.environ["WANDB_API_KEY"] == SECRET
    assert_the_planned_program_ran("info-clip", read_metrics(run / "metrics.jsonl"))


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
        sessions |= _session_roots(before, root)
        launched = [p for p in _tree(root)[1:] if "openrlhf_adapter.launch" in _command(p)]
        launch = launched[0] if launched else None
        time.sleep(0.05)
    assert launch is not None and sessions, "the run never started its Ray"
    launch.send_signal(signal.SIGTERM)
    launch.wait(timeout=120)
    process.communicate(timeout=300)
    assert not any(session.exists() for session in sessions), "the Ray session folder was left behind"
