"""The port a worker group's rendezvous (its torch TCP store) listens on, chosen so that nothing else on
the machine takes it between the choice and the bind.

Upstream's rank 0 picks the port by binding port 0 and closing the socket
(``BaseDistributedActor._get_free_port``); the store binds it only later, in DeepSpeed's
``init_distributed``, after the model has loaded. Port 0 is drawn from the kernel's ephemeral range,
which every other ``bind(0)`` and every outgoing connection's source port on the machine also draws
from: a second run beside the first (a test beside a sweep, a sweep's parallel runs) can take the port
in between, and the run then fails before its first step with ``EADDRINUSE``. :func:`reserve_port`
draws from outside the ephemeral range and outside Ray's worker ports, checks the port with a bind,
and holds a lock file on it for the life of the process, so that no two infoppo processes on one
machine hand out the same port.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path
from typing import IO

EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LINUX_EPHEMERAL_PORTS = range(32768, 61000)
"""Linux's default ephemeral range, where the kernel does not say otherwise."""
RAY_WORKER_PORTS = range(10002, 20000)
"""``ray start``'s default ``--min-worker-port``..``--max-worker-port``: a cluster node's workers listen
there (an embedded Ray's workers take ports from the ephemeral range)."""
ATTEMPTS = 200

_held: dict[int, IO[str]] = {}
"""The lock files of the ports this process reserved, open until it exits."""


def ephemeral_ports(source: Path = EPHEMERAL_RANGE_FILE) -> range:
    """The kernel's ephemeral port range (Linux's default where it cannot be read)."""
    try:
        low, high = (int(field) for field in source.read_text().split())
    except (OSError, ValueError):
        return LINUX_EPHEMERAL_PORTS
    return range(low, high + 1)


def candidate_ports(ephemeral: range) -> range:
    """Ports that neither the kernel's ``bind(0)`` nor Ray's workers hand out: between Ray's worker
    ports and the ephemeral range, or above the ephemeral range where that gap is empty."""
    below = range(RAY_WORKER_PORTS.stop, ephemeral.start)
    if len(below) > 0:
        return below
    above = range(max(ephemeral.stop, RAY_WORKER_PORTS.stop), 65536)
    if len(above) > 0:
        return above
    raise RuntimeError(
        f"infoppo: no port outside the ephemeral range {ephemeral.start}-{ephemeral.stop - 1} "
        f"and Ray's worker ports {RAY_WORKER_PORTS.start}-{RAY_WORKER_PORTS.stop - 1}"
    )


def reservations_dir() -> Path:
    """Where this user's infoppo processes hold their ports' lock files."""
    directory = Path(tempfile.gettempdir()) / f"infoppo-ports-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    return directory


def bindable(port: int) -> bool:
    """Whether nothing on this machine listens on or holds ``port`` (TCP, every interface)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


def reserve_port(rng: random.Random | None = None, directory: Path | None = None) -> int:
    """A port for a rendezvous server, held against other infoppo processes until this one exits."""
    rng = rng or random.SystemRandom()
    candidates = candidate_ports(ephemeral_ports())
    directory = directory or reservations_dir()
    for _ in range(ATTEMPTS):
        port = rng.choice(candidates)
        if port in _held:
            continue
        handle = open(directory / str(port), "a")  # noqa: SIM115 - held open: the lock lives with it
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()  # another infoppo process holds it
            continue
        if not bindable(port):
            handle.close()
            continue
        _held[port] = handle
        return port
    raise RuntimeError(
        f"infoppo: no free rendezvous port in {candidates.start}-{candidates.stop - 1} after {ATTEMPTS} tries"
    )
