"""Grading in worker processes with a hard per-response deadline, on pebble's ``ProcessPool``.

math-verify bounds its own work with ``signal.alarm``, which only works on a process's main thread and
cannot interrupt a long computation inside C code. Workers grade on their main thread, and pebble gives
every response a hard deadline on top: a worker that overruns is killed and replaced, and its response
is marked ``timeout`` (the approach verl PR #5839 and Qwen2.5-Math's evaluation take). Workers are
started with ``spawn`` (fresh interpreters, not forks) so that a caller's threads or CUDA context never
leak into them; the reward function calls this from a worker thread of a vLLM actor. As with any
``spawn`` pool, a script that grades at import time must guard its entry point with
``if __name__ == "__main__":`` (the ``infoppo`` command, pytest and Ray's workers all do).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait
from typing import Any

from infoppo_cli.grading.verify import DEFAULT_TIMEOUT, Verdict, grade_pair, inner_timeout_seconds

CHUNK = 8
"""Responses sent to a worker as one task: few, so that a stuck one delays few others (retried alone)."""

_TIMEOUT = Verdict(False, None, "timeout")
_ERROR = Verdict(False, None, "error")


def default_workers() -> int:
    """All the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _start_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # verdicts carry the outcome
    grade_pair("\\boxed{1}", "1", 1)  # import and warm math-verify before the first deadline starts


def _grade_chunk(pairs: list[tuple[str, str]], inner_timeout: int) -> list[Verdict]:
    return [grade_pair(response, gold, inner_timeout) for response, gold in pairs]


def _worker_pid() -> int:
    return os.getpid()


class GradingPool:
    """Worker processes that grade ``(response, gold)`` pairs with a hard per-response deadline.

    Workers start on first use (or :meth:`start`) and are reused across :meth:`grade` calls; several
    threads may call :meth:`grade` at once.
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.max_workers = max(1, workers or default_workers())
        self.timeout = float(timeout)
        self._inner_timeout = inner_timeout_seconds(self.timeout)
        self._pool = None
        self._lock = threading.Lock()

    def __enter__(self) -> GradingPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _processes(self) -> Any:
        """The pebble pool, started anew when there is none or the last one broke.

        pebble gives up on its whole pool when a worker dies while no task runs (killed from outside,
        say); the tasks it held then fail and are retried on the new pool.
        """
        from pebble import ProcessPool

        with self._lock:
            if self._pool is not None and not self._pool.active:
                _discard(self._pool)
                self._pool = None
            if self._pool is None:
                self._pool = ProcessPool(
                    max_workers=self.max_workers,
                    initializer=_start_worker,
                    context=multiprocessing.get_context("spawn"),
                )
            return self._pool

    def _schedule(self, function: Callable[..., Any], args: tuple = ()) -> Any:
        try:
            return self._processes().schedule(function, args, timeout=self.timeout)
        except RuntimeError:  # the pool broke since the check above: once more on a new one
            return self._processes().schedule(function, args, timeout=self.timeout)

    def start(self) -> None:
        """Start every worker now and wait until they are ready, instead of on first use."""
        wait([self._schedule(_worker_pid) for _ in range(self.max_workers)])

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers (for diagnostics and tests; read from pebble's manager)."""
        manager = getattr(getattr(self._pool, "_pool_manager", None), "worker_manager", None)
        workers = getattr(manager, "workers", {})
        return sorted(pid for pid, process in dict(workers).items() if process.is_alive())

    def close(self) -> None:
        """Stop the workers (at once: a worker holds nothing that needs a clean exit)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            _discard(pool)

    def grade(
        self, pairs: Sequence[tuple[str, str]], on_done: Callable[[int], None] | None = None
    ) -> list[Verdict]:
        """Grade ``(response, gold)`` pairs; results come back in input order.

        Identical pairs are graded once. ``on_done(n)`` is called whenever ``n`` more input pairs have
        their verdict (the ``n`` of all calls add up to ``len(pairs)``).
        """
        groups: dict[tuple[str, str], list[int]] = {}
        for position, (response, gold) in enumerate(pairs):
            groups.setdefault((str(response), str(gold)), []).append(position)
        unique = list(groups)

        def finished(items: list[int], verdicts: list[Verdict]) -> None:
            for item, verdict in zip(items, verdicts, strict=True):
                for position in groups[unique[item]]:
                    results[position] = verdict
                if on_done is not None:
                    on_done(len(groups[unique[item]]))

        results: list[Verdict] = [_ERROR] * len(pairs)
        if unique:
            self._run(unique, finished)
        return results

    def _run(
        self, items: list[tuple[str, str]], finished: Callable[[list[int], list[Verdict]], None]
    ) -> None:
        """Grade in chunks, each under the per-response deadline; the responses of a chunk that overran
        or lost its worker are retried one at a time, each with the full deadline again."""
        size = max(1, min(CHUNK, len(items) // (self.max_workers * 4)))
        chunks = [list(range(start, min(start + size, len(items)))) for start in range(0, len(items), size)]
        retry: list[int] = []
        for chunk, future in self._submit(items, chunks):
            if future.exception() is None:
                finished(chunk, future.result())
            elif len(chunk) == 1 and isinstance(future.exception(), FutureTimeout):
                finished(chunk, [_TIMEOUT])  # it had the whole deadline to itself
            else:
                retry.extend(chunk)
        for chunk, future in self._submit(items, [[item] for item in retry]):
            finished(chunk, future.result() if future.exception() is None else [_failure(future)])

    def _submit(
        self, items: list[tuple[str, str]], chunks: list[list[int]]
    ) -> Iterator[tuple[list[int], Any]]:
        """Schedule every chunk now; yield each with its finished future, in order."""
        futures = [
            self._schedule(_grade_chunk, ([items[i] for i in chunk], self._inner_timeout)) for chunk in chunks
        ]
        for chunk, future in zip(chunks, futures, strict=True):
            future.exception()  # waits for this one; the later ones keep running meanwhile
            yield chunk, future


def _discard(pool: Any) -> None:
    pool.stop()
    pool.join()


def _failure(future: Any) -> Verdict:
    """``timeout`` when the deadline killed the worker, ``error`` otherwise (the worker died or raised)."""
    return _TIMEOUT if isinstance(future.exception(), FutureTimeout) else _ERROR


def grade_many(
    pairs: Sequence[tuple[str, str]],
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_done: Callable[[int], None] | None = None,
) -> list[Verdict]:
    """Grade ``(response, gold)`` pairs in worker processes (default: one per core), in input order.

    Each pair gets a hard deadline of ``timeout`` seconds: past it the worker is killed and replaced
    and the pair is ``Verdict(False, None, "timeout")``. A pair whose worker dies is retried alone
    (then ``"error"``). Identical pairs are graded once. ``on_done(n)`` reports progress as ``n`` more
    pairs finish.
    """
    if not pairs:
        return []
    distinct = len(set(pairs))
    with GradingPool(workers=min(workers or default_workers(), distinct), timeout=timeout) as pool:
        return pool.grade(pairs, on_done=on_done)
