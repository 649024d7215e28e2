"""Grading in worker processes with a hard per-response deadline.

math-verify bounds its own work with ``signal.alarm``, which only works on a process's main thread and
cannot interrupt a long computation inside C code. Workers grade on their main thread, and the parent
gives every task a hard deadline on top: a worker that overruns is killed and replaced, and its
responses are marked ``timeout`` (the approach verl PR #5839 and Qwen2.5-Math's evaluation take). A
worker killed from outside costs only its task, retried at once on the others
(:mod:`~infoppo_cli.grading.workers` says why that needs a pipe per worker). Workers are started with
``spawn`` (fresh interpreters, not forks) so that a caller's threads or CUDA context never leak into
them; the reward function calls this from a worker thread of a vLLM actor. As with any ``spawn`` pool,
a script that grades at import time must guard its entry point with ``if __name__ == "__main__":``
(the ``infoppo`` command, pytest and Ray's workers all do).

:meth:`GradingPool.explain` (and :func:`explain_many`) also return how each pair was read, computed in
the worker under the same deadline, for ``infoppo grade --file``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from infoppo_cli.grading.verify import (
    DEFAULT_TIMEOUT,
    Reading,
    Verdict,
    grade_pair,
    inner_timeout_seconds,
    read_pair,
)
from infoppo_cli.grading.workers import Workers, WorkersClosed

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
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # verdicts carry the outcome
    grade_pair("\\boxed{1}", "1", 1)  # import and warm math-verify before the first deadline starts


def _grade_chunk(pairs: list[tuple[str, str]], inner_timeout: int) -> list[Verdict]:
    return [grade_pair(response, gold, inner_timeout) for response, gold in pairs]


def _read_chunk(pairs: list[tuple[str, str]], inner_timeout: int) -> list[tuple[Verdict, Reading]]:
    return [read_pair(response, gold, inner_timeout) for response, gold in pairs]


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
        self._workers: Workers | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> GradingPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _processes(self) -> Workers:
        """The workers, started anew when there are none (or they were stopped)."""
        with self._lock:
            if self._workers is None or not self._workers.alive:
                self._workers = Workers(
                    self.max_workers, multiprocessing.get_context("spawn"), initializer=_start_worker
                )
            return self._workers

    def _schedule(self, function: Callable[..., Any], args: tuple = ()) -> Any:
        try:
            return self._processes().submit(function, args, self.timeout)
        except WorkersClosed:  # closed by another thread since the check above: once more on new ones
            return self._processes().submit(function, args, self.timeout)

    def start(self) -> None:
        """Start every worker now and wait until they are ready, instead of on first use."""
        self._processes().wait_ready()

    def worker_pids(self) -> list[int]:
        """Process ids of the workers, replacements still starting included (for diagnostics, tests)."""
        workers = self._workers
        return workers.pids() if workers is not None else []

    def close(self) -> None:
        """Stop the workers (at once: a worker holds nothing that needs a clean exit)."""
        with self._lock:
            workers, self._workers = self._workers, None
        if workers is not None:
            workers.close()

    def grade(
        self, pairs: Sequence[tuple[str, str]], on_done: Callable[[int], None] | None = None
    ) -> list[Verdict]:
        """Grade ``(response, gold)`` pairs; results come back in input order.

        Identical pairs are graded once. ``on_done(n)`` is called whenever ``n`` more input pairs have
        their verdict (the ``n`` of all calls add up to ``len(pairs)``).
        """
        return self._map(_grade_chunk, lambda verdict: verdict, pairs, on_done)

    def explain(
        self, pairs: Sequence[tuple[str, str]], on_done: Callable[[int], None] | None = None
    ) -> list[tuple[Verdict, Reading | None]]:
        """:meth:`grade` with how each pair was read, every step of it inside the deadline.

        The reading is ``None`` where the pool decided the verdict: the worker overran the deadline or
        died.
        """
        return self._map(_read_chunk, lambda verdict: (verdict, None), pairs, on_done)

    def _map(
        self,
        task: Callable[[list[tuple[str, str]], int], list[Any]],
        failed: Callable[[Verdict], Any],
        pairs: Sequence[tuple[str, str]],
        on_done: Callable[[int], None] | None,
    ) -> list[Any]:
        """``task`` over the distinct pairs, results in input order; ``failed`` turns the pool's own
        timeout or error verdict into a result."""
        groups: dict[tuple[str, str], list[int]] = {}
        for position, (response, gold) in enumerate(pairs):
            groups.setdefault((str(response), str(gold)), []).append(position)
        unique = list(groups)

        def finished(items: list[int], outcomes: list[Any]) -> None:
            for item, outcome in zip(items, outcomes, strict=True):
                for position in groups[unique[item]]:
                    results[position] = outcome
                if on_done is not None:
                    on_done(len(groups[unique[item]]))

        results: list[Any] = [failed(_ERROR)] * len(pairs)
        if unique:
            self._run(unique, task, failed, finished)
        return results

    def _run(
        self,
        items: list[tuple[str, str]],
        task: Callable[[list[tuple[str, str]], int], list[Any]],
        failed: Callable[[Verdict], Any],
        finished: Callable[[list[int], list[Any]], None],
    ) -> None:
        """Grade in chunks, each under the per-response deadline; the responses of a chunk that overran
        or lost its worker are retried one at a time, each with the full deadline again."""
        size = max(1, min(CHUNK, len(items) // (self.max_workers * 4)))
        chunks = [list(range(start, min(start + size, len(items)))) for start in range(0, len(items), size)]
        retry: list[int] = []
        for chunk, future in self._submit(task, items, chunks):
            if future.exception() is None:
                finished(chunk, future.result())
            elif len(chunk) == 1 and isinstance(future.exception(), FutureTimeout):
                finished(chunk, [failed(_TIMEOUT)])  # it had the whole deadline to itself
            else:
                retry.extend(chunk)
        for chunk, future in self._submit(task, items, [[item] for item in retry]):
            finished(chunk, future.result() if future.exception() is None else [failed(_failure(future))])

    def _submit(
        self,
        task: Callable[[list[tuple[str, str]], int], list[Any]],
        items: list[tuple[str, str]],
        chunks: list[list[int]],
    ) -> Iterator[tuple[list[int], Any]]:
        """Schedule every chunk now; yield each with its finished future, in order."""
        futures = [self._schedule(task, ([items[i] for i in chunk], self._inner_timeout)) for chunk in chunks]
        for chunk, future in zip(chunks, futures, strict=True):
            future.exception()  # waits for this one; the later ones keep running meanwhile
            yield chunk, future


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
    with _pool_for(pairs, workers, timeout) as pool:
        return pool.grade(pairs, on_done=on_done)


def explain_many(
    pairs: Sequence[tuple[str, str]],
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_done: Callable[[int], None] | None = None,
) -> list[tuple[Verdict, Reading | None]]:
    """:func:`grade_many` with how each pair was read (see :meth:`GradingPool.explain`)."""
    if not pairs:
        return []
    with _pool_for(pairs, workers, timeout) as pool:
        return pool.explain(pairs, on_done=on_done)


def _pool_for(pairs: Sequence[tuple[str, str]], workers: int | None, timeout: float) -> GradingPool:
    """A pool for one batch: no more workers than distinct pairs."""
    return GradingPool(workers=min(workers or default_workers(), len(set(pairs))), timeout=timeout)
