"""Faults found by a hostile but fair user (issue "Nothing lost, nothing leaked, nothing wrong"):
a secret on disk, an open Ray, and Ray's leftovers. One real CPU run, watched while it trains.

* A planted ``WANDB_API_KEY`` (and Ray token) reaches no file under Ray's session folder, the run
  directory or the terminal (Ray used to log the key with the runtime environment; wandb logs offline
  here, no network).
* While it trains, a Ray client without the run's token is refused, and Ray's web dashboard is not
  served beyond loopback. (Ray 2.55 binds its gRPC servers to every interface whatever the node
  address, and torch's rendezvous store does too: ``local_ray.py``; this test does not pretend
  otherwise.)
* Ray's session folder is private (0700) while the run lives and removed when it ends.
"""

from __future__ import annotations

import contextlib
import os
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
LOOPBACK = ("127.0.0.1", "::1")
DASHBOARD_PORT = 8265


def _unauthenticated_client_refused(port: int) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    probe = f"import ray; ray.init(address='127.0.0.1:{port}'); print('CONNECTED')"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    return done.returncode != 0 and "CONNECTED" not in done.stdout


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


def _session_roots(before: set[Path]) -> set[Path]:
    return {path for path in Path("/tmp").glob("infoppo-ray-*")} - before


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
        for session in _session_roots(before):
            sessions.add(session)
            with contextlib.suppress(FileNotFoundError):
                modes.add(stat.S_IMODE(session.stat().st_mode))
            for planted in (SECRET, TOKEN):
                assert not _files_with(session, planted.encode()), "a secret reached Ray's session folder"
        time.sleep(0.5)
    out, err = process.communicate()
    assert process.returncode == 0, out[-3000:] + err[-3000:]

    assert watched, "no listening socket was seen while the run trained"
    web = [address for address in watched if address[1] == DASHBOARD_PORT and address[0] not in LOOPBACK]
    assert not web, f"Ray's dashboard served beyond loopback: {web}"
    assert refused is True, "a Ray client without the run's token was let in"
    assert sessions and modes == {0o700}
    assert not any(session.exists() for session in sessions)  # removed when the run ended
    assert SECRET not in out + err and TOKEN not in out + err
    assert not _files_with(run, SECRET.encode()) and not _files_with(run, TOKEN.encode())
    assert "offline" in out  # no network to wandb's server: the plan switched it to offline logging
    assert os.environ["WANDB_API_KEY"] == SECRET
    assert_the_planned_program_ran("info-clip", read_metrics(run / "metrics.jsonl"))
