"""The embedded Ray of a run started without ``--address``: on loopback, private, and gone at the end.

Ray's defaults suit a cluster, not a training run on a shared machine: it binds its node address and
dashboard to every interface without authentication (anyone on the network could submit jobs while
the run trains), and writes its session folder, logs included, under a world-writable ``/tmp/ray``
that outlives the run. infoppo starts its embedded Ray with the node on ``127.0.0.1``, no dashboard,
and its session folder in a fresh private directory (``mkdtemp``: mode 0700) that is removed when the
run ends, or moved into the run directory's ``ray-logs/`` with ``--keep-ray-logs``. The directory is
under the system's temporary folder, not the run directory, because Ray's socket paths must stay
under the operating system's 107-character limit.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
KEPT_LOGS = "ray-logs"


class LocalRay:
    """The options of an embedded Ray and the clean-up of its session folder."""

    def __init__(self, run_dir: Path | None, keep_logs: bool = False) -> None:
        self.run_dir = run_dir
        self.keep_logs = keep_logs
        self.session_root = Path(tempfile.mkdtemp(prefix="infoppo-ray-"))

    def init_options(self) -> dict[str, Any]:
        """``ray.init`` keyword arguments: loopback only, no dashboard, the private session folder."""
        return {"_node_ip_address": LOOPBACK, "include_dashboard": False, "_temp_dir": str(self.session_root)}

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
