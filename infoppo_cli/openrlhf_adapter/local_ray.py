"""The embedded Ray of a run started without ``--address``: authenticated, private, gone at the end.

Ray's defaults suit a cluster, not a training run on a shared machine: its servers accept any client
on every interface without authentication (anyone on the network could submit jobs while the run
trains), and it writes its session folder, logs included, under a world-writable ``/tmp/ray`` that
outlives the run. infoppo starts its embedded Ray

* with Ray's token authentication (``RAY_AUTH_MODE=token``) and a fresh random token per run, held in
  the environment of the run's processes only (a ``RAY_AUTH_TOKEN`` you set is used instead): a
  client without it is refused;
* on the loopback interface, with no dashboard web UI and no metrics exporter of its node agent.
  Ray 2.55, the release OpenRLHF 0.11.2 pins, turns a node address of ``127.0.0.1`` given to
  ``ray.init`` into the machine's address (``services.resolve_ip_for_localhost``) unless its
  "cluster" switch is off (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, its setting for single machines),
  and binds its servers (GCS, raylet, workers, agents) and its Prometheus exporters to the node address
  or to every interface: with that switch off the node address is loopback and so is every one of
  them. ``RAY_enable_metrics_collection=0`` stops the node agent's exporter; the dashboard head's and
  the autoscaler monitor's metrics servers cannot be turned off in 2.55 and answer on loopback only,
  unauthenticated (Prometheus metrics: resource use and task counts, no secrets);
* with its session folder inside a fresh private directory (``mkdtemp``: mode 0700; Ray makes its own
  folder world-writable, its parent keeps everyone else out) that is removed when the run ends, or
  moved into the run directory's ``ray-logs/`` with ``--keep-ray-logs``, also when a signal (SIGTERM,
  SIGHUP, SIGQUIT) stops the process, during start-up included: the signal becomes ``SystemExit``, so
  that ``ray.shutdown`` and the clean-up run (only SIGKILL leaves the folder behind). It is under the
  system's temporary folder, not the run directory, because Ray's socket paths must stay under the
  operating system's 107-character limit.
* torch's rendezvous store (DeepSpeed's process group, over gloo on a CPU run) also listens on every
  interface while the workers start; it is torch's, outside Ray's authentication.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
KEPT_LOGS = "ray-logs"
AUTH_MODE_ENV, AUTH_TOKEN_ENV = "RAY_AUTH_MODE", "RAY_AUTH_TOKEN"
PRIVATE_NODE_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # the node address stays loopback (see above)
    "RAY_enable_metrics_collection": "0",  # no Prometheus exporter in the node agent
}
"""Ray's settings for an embedded, single-machine Ray, read by Ray (and its processes) at start."""
EMBEDDED_RAY = (
    "embedded local Ray on 127.0.0.1 only, token-authenticated; Ray 2.55 keeps two metrics servers on "
    "(dashboard head, autoscaler), unauthenticated on 127.0.0.1"
)
"""The plan's Ray row for a run without ``--address``."""
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""Signals that stop a run: each becomes ``SystemExit`` so that Ray is shut down and its folder removed."""


class LocalRay:
    """The options of an embedded Ray and the clean-up of its session folder."""

    def __init__(self, run_dir: Path | None, keep_logs: bool = False) -> None:
        self.run_dir = run_dir
        self.keep_logs = keep_logs
        exit_on_signals()  # before the folder exists: no moment in which a signal leaves it behind
        self.session_root = Path(tempfile.mkdtemp(prefix="infoppo-ray-"))
        atexit.register(self.close)  # any exit that unwinds (a signal's SystemExit) cleans up

    @staticmethod
    def prepare_environment() -> None:
        """Switch Ray's token authentication on and keep its node on loopback without a metrics exporter
        (:data:`PRIVATE_NODE_ENV`), in this process's environment, which Ray's processes inherit; before
        Ray is imported (it reads its configuration once, at import)."""
        os.environ[AUTH_MODE_ENV] = "token"
        os.environ.setdefault(AUTH_TOKEN_ENV, secrets.token_hex(32))
        os.environ.update(PRIVATE_NODE_ENV)

    def init_options(self) -> dict[str, Any]:
        """``ray.init`` keyword arguments: loopback node, no dashboard, the private session folder."""
        temp = self.session_root / "r"  # Ray makes its temp folder world-writable; its parent stays 0700
        return {"_node_ip_address": LOOPBACK, "include_dashboard": False, "_temp_dir": str(temp)}

    def close(self) -> Path | None:
        """After ``ray.shutdown``: remove the session folder, or move it into the run directory
        (returned) when the logs are to be kept. Once: a later call finds nothing to do."""
        if not self.session_root.exists():
            return None
        if self.keep_logs and self.run_dir is not None:
            target = self.run_dir / KEPT_LOGS
            if target.exists():
                shutil.rmtree(target)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            shutil.move(str(self.session_root), target)
            return target
        shutil.rmtree(self.session_root, ignore_errors=True)
        return None


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def exit_on_signals() -> None:
    """Make each of :data:`STOPPING_SIGNALS` raise ``SystemExit`` in this (the main) thread, where
    Python's default would end the process at once, before any ``finally`` or ``atexit`` ran."""
    for signum in STOPPING_SIGNALS:
        signal.signal(signum, _exit_on_signal)
