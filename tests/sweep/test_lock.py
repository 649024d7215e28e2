"""One sweep process per directory; a lock left by a killed sweep is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.lock import LOCK_FILE, sweep_lock

HOLD = """
import sys, time
from pathlib import Path
from infoppo_cli.sweep.lock import sweep_lock
with sweep_lock(Path(sys.argv[1])):
    Path(sys.argv[1], "held").write_text("yes")
    time.sleep(600)
"""


def test_the_lock_admits_one_sweep_per_directory(tmp_path: Path) -> None:
    with (
        sweep_lock(tmp_path),
        pytest.raises(UsageError, match="in use by another infoppo sweep"),
        sweep_lock(tmp_path),
    ):
        pass
    with sweep_lock(tmp_path):  # released again
        pass


def test_a_lock_left_by_a_killed_sweep_is_taken_over_and_said_so(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)])
    deadline = time.monotonic() + 60
    while not (tmp_path / "held").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    refused = f"in use by another infoppo sweep \\(pid {holder.pid}\\)"
    with pytest.raises(UsageError, match=refused), sweep_lock(tmp_path):
        pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / LOCK_FILE).read_text() == f"pid {holder.pid}\n"  # left behind
    with sweep_lock(tmp_path) as note:
        assert note is not None and f"pid {holder.pid}, no longer running" in note
    with sweep_lock(tmp_path) as note:  # a clean stop leaves nothing to take over
        assert note is None
