"""One real CPU run watched while it trains, as the fault tests of the run's exposure and of its last
eval use it: its listening sockets, its Ray session folders (their mode, any planted secret in them),
whether a Ray client without the run's token is refused, and what it leaves behind. ``observe`` is one
such look at any running ``infoppo`` command (the eval on Ray engines is watched with it too).

The run: ``--method info-clip``, 2 RL steps with the eval grid at 3 (so its last step's eval is off
the grid), wandb on with a planted key (no network here: the plan logs offline), a planted Ray
token and a planted ``INFOPPO_*`` variable no worker reads."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from cli_process import start_infoppo

SECRET = "sekret-1234-planted"
TOKEN = "ray-token-5678-planted"
PLANTED_SETTING = "private-setting-9012-planted"
RAY_SERVERS = ("gcs_server", "raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent")
RAY_SCRIPTS = ("ray/dashboard/", "ray/autoscaler/", "ray/_private/log_monitor")
"""Ray's own server processes, by name or by the script they run."""


def ray_servers(watched: dict[tuple[str, int], tuple[str, str]]) -> dict[tuple[str, int], str]:
    return {
        address: name
        for address, (name, command) in watched.items()
        if name in RAY_SERVERS or any(script in command for script in RAY_SCRIPTS)
    }


LOOPBACK = ("127.0.0.1", "::1")
DASHBOARD_PORT = 8265


def unauthenticated_client_refused(port: int) -> bool:
    """A local client without the token (one elsewhere cannot reach loopback at all) is refused for it.
    Ray's client turns 127.0.0.1 into the machine's address unless its single-machine switch is off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    probe = f"import ray; ray.init(address='127.0.0.1:{port}'); print('CONNECTED')"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    return done.returncode != 0 and "CONNECTED" not in done.stdout and "Authentication" in done.stderr


def tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def listening(processes: list[psutil.Process]) -> dict[tuple[str, int], tuple[str, str]]:
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


def command(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
        return " ".join(process.cmdline())
    return ""


def session_roots(before: set[Path], run: psutil.Process) -> set[Path]:
    """This run's Ray session folders (its Ray processes name theirs: other runs may start beside it)."""
    named = {Path(found) for process in tree(run) for found in SESSION_ROOT.findall(command(process))}
    return {path for path in Path("/tmp").glob("infoppo-ray-*") if path in named} - before


def files_with(root: Path, text: bytes) -> list[Path]:
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


@dataclass
class Watched:
    """What was seen of one run."""

    run: Path
    out: str
    err: str
    returncode: int
    listening: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)
    sessions: set[Path] = field(default_factory=set)
    session_modes: set[int] = field(default_factory=set)
    planted_in_sessions: list[tuple[str, Path]] = field(default_factory=list)
    stranger_refused: bool | None = None
    wandb_key_after: str | None = None


def observe(
    seen: Watched,
    process: subprocess.Popen,
    root: psutil.Process,
    before: set[Path],
    planted: tuple[str, ...] = (),
) -> None:
    """One look at a running ``infoppo`` command: its listening sockets, whether a Ray client without its
    token is refused (asked once, when its GCS is seen), its Ray session folders and their mode, and any
    ``planted`` value in them, added to ``seen`` (``root``: the command's process, as psutil sees it)."""
    seen.listening |= listening(tree(root))
    gcs = [port for (_, port), (name, _) in seen.listening.items() if name == "gcs_server"]
    if seen.stranger_refused is None and gcs and process.poll() is None:
        seen.stranger_refused = unauthenticated_client_refused(gcs[0])
    for session in session_roots(before, root):
        seen.sessions.add(session)
        with contextlib.suppress(FileNotFoundError):
            seen.session_modes.add(stat.S_IMODE(session.stat().st_mode))
        for value in planted:
            seen.planted_in_sessions += [(value, path) for path in files_with(session, value.encode())]


WATCHED_ARGS = ("--method", "info-clip", "--steps", "2", "--eval-every", "3", "--eval-samples", "2")


def watch_a_run(run: Path) -> Watched:
    """Train ``run`` (``WATCHED_ARGS``, no eval before step 1) and watch it until it ends."""
    planted = {"WANDB_API_KEY": SECRET, "RAY_AUTH_TOKEN": TOKEN, "INFOPPO_PLANTED_SETTING": PLANTED_SETTING}
    saved = {key: os.environ.get(key) for key in (*planted, "WANDB_MODE")}
    os.environ.update(planted)
    os.environ.pop("WANDB_MODE", None)
    try:
        return _watch(run)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _watch(run: Path) -> Watched:
    before = set(Path("/tmp").glob("infoppo-ray-*"))
    args = ("train", "--preset", "tiny-cpu", *WATCHED_ARGS, "--no-eval-before", "--output-dir", str(run))
    process = start_infoppo(*args)
    seen = Watched(run, "", "", -1)
    root = psutil.Process(process.pid)
    while process.poll() is None:
        observe(seen, process, root, before, planted=(SECRET, TOKEN, PLANTED_SETTING))
        time.sleep(0.5)
    seen.out, seen.err = process.communicate()
    seen.returncode = process.returncode
    seen.wandb_key_after = os.environ.get("WANDB_API_KEY")
    return seen
