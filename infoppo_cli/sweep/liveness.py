"""Whether a process a sweep recorded is still at work in a run directory."""

from __future__ import annotations

import os
from pathlib import Path


def process_runs_in(pid: int, output_dir: str) -> bool:
    """Whether ``pid`` is alive and its command line mentions ``output_dir`` (not a recycled pid)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True  # alive but unreadable: assume it is ours rather than risk two runs in one directory
    return output_dir in cmdline
