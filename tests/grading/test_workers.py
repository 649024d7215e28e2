"""Worker processes with a pipe each: answers, hard deadlines, and workers that die or never start."""

from __future__ import annotations

import functools
import multiprocessing
import operator
import os
import signal
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait

import pytest

from infoppo_cli.grading.workers import WorkerDied, Workers, WorkersClosed

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(scope="module")
def workers():
    shared = Workers(2, SPAWN)
    shared.wait_ready()
    yield shared
    shared.close()


def _pids_once(group: Workers, count: int, other_than: list[int] = ()) -> list[int]:
    """The worker pids once ``count`` are up and none is in ``other_than`` (replacements take a moment)."""
    for _ in range(200):
        pids = group.pids()
        if len(pids) == count and not set(pids) & set(other_than):
            return pids
        time.sleep(0.05)
    return group.pids()


def test_tasks_run_in_the_workers_and_answer_their_futures(workers):
    assert workers.submit(operator.add, (2, 3), 10).result() == 5
    pids = {workers.submit(os.getpid, (), 10).result() for _ in range(8)}
    assert pids <= set(workers.pids()) and os.getpid() not in pids


def test_a_task_that_raises_fails_its_future_and_the_worker_serves_on(workers):
    before = workers.pids()
    with pytest.raises(ValueError, match="invalid literal"):
        workers.submit(int, ("x",), 10).result()
    with pytest.raises(RuntimeError, match="pickle"):
        workers.submit(threading.Lock, (), 10).result()  # the answer cannot travel back
    with pytest.raises(Exception, match="pickle"):
        workers.submit(operator.add, (lambda: 0, 1), 10).result()  # nor can this task travel there
    assert workers.submit(operator.mul, (6, 7), 10).result() == 42
    assert workers.pids() == before


def test_many_threads_submit_at_once(workers):
    results: dict[int, list[int]] = {}

    def call(k: int) -> None:
        futures = [workers.submit(operator.add, (k, i), 10) for i in range(25)]
        results[k] = [future.result(timeout=30) for future in futures]

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == {k: [k + i for i in range(25)] for k in range(4)}


@pytest.mark.slow
def test_a_task_past_its_deadline_is_killed_and_its_worker_replaced():
    with_one = Workers(1, SPAWN)
    try:
        with_one.wait_ready()
        before = with_one.pids()
        started = time.monotonic()
        with pytest.raises(FutureTimeout):
            with_one.submit(time.sleep, (60,), 0.5).result(timeout=30)
        assert time.monotonic() - started < 5
        assert with_one.submit(operator.add, (1, 1), 10).result(timeout=30) == 2
        assert _pids_once(with_one, 1, other_than=before) != before
    finally:
        with_one.close()


@pytest.mark.slow
def test_a_worker_killed_mid_task_fails_that_task_at_once_not_at_its_deadline():
    with_one = Workers(1, SPAWN)
    try:
        with_one.wait_ready()
        victim = with_one.pids()[0]
        future = with_one.submit(time.sleep, (60,), 60)
        queued = with_one.submit(operator.add, (2, 2), 60)
        while not future.running():
            time.sleep(0.01)
        started = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        with pytest.raises(WorkerDied):
            future.result(timeout=30)
        assert queued.result(timeout=30) == 4  # the task behind it went to the replacement
        assert time.monotonic() - started < 10
        assert victim not in with_one.pids()
    finally:
        with_one.close()


@pytest.mark.slow
def test_workers_killed_again_and_again_under_traffic_never_stall_the_rest():
    # A worker killed at any moment, even mid-answer, costs only the task it was running.
    group = Workers(2, SPAWN)
    try:
        group.wait_ready()
        started = time.monotonic()
        futures = [group.submit(time.sleep, (0.002,), 10) for _ in range(600)]
        for _ in range(4):
            wait(futures, timeout=0.3)
            for pid in group.pids()[:1]:
                os.kill(pid, signal.SIGKILL)
        done, pending = wait(futures, timeout=40)
        assert not pending, f"{len(pending)} tasks never answered"
        assert all(f.exception() is None or isinstance(f.exception(), WorkerDied) for f in done)
        assert sum(isinstance(f.exception(), WorkerDied) for f in done) <= 4
        assert time.monotonic() - started < 40
    finally:
        group.close()


@pytest.mark.slow
def test_a_worker_killed_while_idle_is_replaced(workers):
    victim = _pids_once(workers, 2)[0]
    os.kill(victim, signal.SIGKILL)
    assert victim not in _pids_once(workers, 2, other_than=[victim])
    assert workers.submit(operator.add, (3, 4), 10).result(timeout=30) == 7


@pytest.mark.slow
def test_workers_that_cannot_start_fail_the_queued_tasks_instead_of_respawning_forever():
    broken = Workers(2, SPAWN, initializer=functools.partial(int, "not a number"))
    try:
        broken.wait_ready()  # returns: starting failed
        with pytest.raises(WorkerDied, match="failed to start"):
            broken.submit(operator.add, (1, 1), 10).result(timeout=60)
    finally:
        broken.close()


def test_close_fails_what_is_unanswered_and_refuses_new_tasks():
    group = Workers(1, SPAWN)
    running = group.submit(time.sleep, (60,), 60)
    queued = group.submit(operator.add, (1, 1), 60)
    group.close()
    for future in (running, queued):
        with pytest.raises(WorkersClosed):
            future.result(timeout=10)
    with pytest.raises(WorkersClosed):
        group.submit(operator.add, (1, 1), 10)
    assert group.pids() == [] and not group.alive
