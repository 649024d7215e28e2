"""The fault tests' shared run: one real CPU run watched while it trains (``watched_run``), which the
exposure and last-eval tests check each for their own faults (each run costs about 45 s of start-up
on 2 cores)."""

from __future__ import annotations

import pytest
from watched_run import Watched, watch_a_run


@pytest.fixture(scope="session")
def exposed_run(task_cache, tmp_path_factory) -> Watched:
    """The watched run, trained once per test process; tests read it and never change it (copy it first)."""
    return watch_a_run(tmp_path_factory.mktemp("watched") / "run")
