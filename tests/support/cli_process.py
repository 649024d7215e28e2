"""Run the real ``infoppo`` entry point in a child process, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_infoppo(*args: str, cwd: Path | None = None, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    """``python -m infoppo_cli ARGS`` with captured output; wide terminal so table rows stay whole."""
    env = {**os.environ, "COLUMNS": "250"}
    command = [sys.executable, "-m", "infoppo_cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
