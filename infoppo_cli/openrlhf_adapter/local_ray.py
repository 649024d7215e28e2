"""The embedded Ray of a run started without ``--address``: authenticated, private, gone at the end.

Ray's defaults suit a cluster, not a training run on a shared machine: its servers accept any client
on every interface without authentication (anyone on the network could submit jobs while the run
trains), and it writes its session folder, logs included, under a world-writable ``/tmp/ray`` that
outlives the run. infoppo starts its embedded Ray

* with Ray's token authentication (``RAY_AUTH_MODE=token``) and a fresh random token per run, held in
  the environment of the run's processes only (a ``RAY_AUTH_TOKEN`` you set is used instead): a
  client without it is refused;
* with the node address ``127.0.0.1`` and no dashboard web UI. Ray 2.55, the release OpenRLHF 0.11.2
  pins, still binds its gRPC servers (GCS, raylet, workers, agents) and two metrics exporters to every
  interface whatever the node address (Ray moved them to the node address later, in its pull request
  59852): on 2.55 they answer only clients that hold the token;
* with its session folder inside a fresh private directory (``mkdtemp``: mode 0700; Ray makes its own
  folder world-writable, its parent keeps everyone else out) that is removed when the run ends, or
  moved into the run directory's ``ray-logs/`` with ``--keep-ray-logs``. It is under the system's
  temporary folder, not the run directory, because Ray's socket paths must stay under the operating
  system's 107-character limit.
* torch's rendezvous store (DeepSpeed's process group, over gloo on a CPU run) also listens on every
  interface while the workers start; it is torch's, outside Ray's authentication.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
KEPT_LOGS = "ray-logs"
AUTH_MODE_ENV, AUTH_TOKEN_ENV = "RAY_AUTH_MODE", "RAY_AUTH_TOKEN"


class LocalRay:
    """The options of an embedded Ray and the clean-up of its session folder."""

    def __init__(self, run_dir: Path | None, keep_logs: bool = False) -> None:
        self.run_dir = run_dir
        self.keep_logs = keep_logs
        self.session_root = Path(tempfile.mkdtemp(prefix="infoppo-ray-"))

    @staticmethod
    def require_token() -> None:
        """Switch Ray's token authentication on in this process's environment, which Ray's processes
        inherit; before Ray is imported (it reads its configuration once, at import)."""
        os.environ[AUTH_MODE_ENV] = "token"
        os.environ.setdefault(AUTH_TOKEN_ENV, secrets.token_hex(32))

    def init_options(self) -> dict[str, Any]:
        """``ray.init`` keyword arguments: loopback node, no dashboard, the private session folder."""
        temp = self.session_root / "r"  # Ray makes its temp folder world-writable; its parent stays 0700
        return {"_node_ip_address": LOOPBACK, "include_dashboard": False, "_temp_dir": str(temp)}

    def close(self) -> Path | None:
        """After ``ray.shutdown``: remove the session folder, or move it into the run directory
        (returned) when the logs are to be kept."""
        if self.keep_logs and self.run_dir is not None:
            target = self.run_dir / KEPT_LOGS
            if target.exists():
                shutil.rmtree(target)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            shutil.move(str(self.session_root), target)
            return target
        shutil.rmtree(self.session_root, ignore_errors=True)
        return None
