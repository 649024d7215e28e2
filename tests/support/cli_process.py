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


def start_infoppo(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """``python -m infoppo_cli ARGS`` started in the background (to be interrupted); output captured."""
    env = {**os.environ, "COLUMNS": "250"}
    command = [sys.executable, "-m", "infoppo_cli", *args]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
    )


def wait_for(condition, timeout: float = 60.0, what: str = "the condition") -> None:
    """Poll ``condition()`` every 10 ms until it is true; fail after ``timeout`` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)
