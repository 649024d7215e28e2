"""The fault tests' shared run: one real CPU run watched while it trains (``watched_run``), which the
exposure and last-eval tests check each for their own faults (each run costs about 45 s of start-up
on 2 cores)."""

from __future__ import annotations

import fcntl
import pickle

import pytest
from watched_run import Watched, watch_a_run


@pytest.fixture(scope="session")
def exposed_run(task_cache, tmp_path_factory, worker_id) -> Watched:
    """The watched run, trained once per ``pytest`` command: the first test process that needs it trains
    it, and the others (pytest-xdist's workers share the parent of their temporary folders) wait for it and
    read what was seen. pytest-xdist 3.8's ``xdist_group`` does not group tests under pytest 9.2, so
    without this each worker that draws one of its tests trained a run of its own. Tests read it and
    never change it (copy it first)."""
    if worker_id == "master":
        return watch_a_run(tmp_path_factory.mktemp("watched") / "run")
    shared = tmp_path_factory.getbasetemp().parent / "watched"
    shared.mkdir(exist_ok=True)
    seen = shared / "seen.pickle"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held while the first worker trains: the others wait here
        if not seen.exists():
            seen.write_bytes(pickle.dumps(watch_a_run(shared / "run")))
    return pickle.loads(seen.read_bytes())
