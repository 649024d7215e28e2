"""Worker processes, each with a pipe of its own, that run one task at a time under a hard deadline.

Why not pebble's ``ProcessPool``: its workers share one pipe guarded by locks held across processes. A
worker killed from outside (the OOM killer, a SIGKILL) while it holds them, as it does while taking a
task or answering, leaves them held for good: the other workers and the replacement then each wait out
pebble's 60 s lock timeout, twice, before the pool gives up, and a task taken but not yet acknowledged
is never timed at all. Here the workers share nothing: a worker that dies closes its own pipe and
process sentinel, so its task fails at once, and a new worker takes its place.

One supervisor thread owns the workers; any thread may :meth:`Workers.submit`. A task's deadline starts
when it is handed to a ready worker; past it the worker is killed and replaced and the task's future
fails with :class:`concurrent.futures.TimeoutError`.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from multiprocessing.connection import wait
from typing import Any


class WorkerDied(RuntimeError):
    """The worker exited (killed, crashed, failed to start) before it answered."""


class WorkersClosed(RuntimeError):
    """The workers were stopped before the task was answered."""


class _Task:
    def __init__(self, function: Callable[..., Any], args: tuple, timeout: float) -> None:
        self.function = function
        self.args = args
        self.timeout = timeout
        self.future: Future = Future()

    def claim(self) -> bool:
        """Mark the task running (again, if it is back in the queue); False if it was cancelled."""
        return self.future.running() or self.future.set_running_or_notify_cancel()


class _Worker:
    """One worker process, the parent's end of its pipe, and the task it runs (if any)."""

    def __init__(self, context: Any, initializer: Callable[[], None] | None) -> None:
        parent_end, child_end = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child_end, initializer), name="infoppo-grading-worker", daemon=True
        )
        self.process.start()
        child_end.close()  # else the parent holds the pipe open and never sees the worker's end close
        self.connection = parent_end
        self.ready = False
        self.task: _Task | None = None
        self.deadline = math.inf

    def give(self, task: _Task) -> None:
        self.connection.send((task.function, task.args))
        self.task = task
        self.deadline = time.monotonic() + task.timeout

    def take_task(self) -> _Task | None:
        task, self.task, self.deadline = self.task, None, math.inf
        return task

    def stop(self) -> None:
        if self.process.exitcode is None:
            self.process.kill()
        self.process.join(timeout=5)
        self.connection.close()


class Workers:
    """``count`` worker processes started with ``context`` that first run ``initializer``."""

    def __init__(self, count: int, context: Any, initializer: Callable[[], None] | None = None) -> None:
        self._count = count
        self._context = context
        self._initializer = initializer
        self._queue: deque[_Task] = deque()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._closing = False
        self._start_failed = False
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._wake_writer.setblocking(False)
        self._thread = threading.Thread(target=self._supervise, name="infoppo-grading-workers", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._closing

    def submit(self, function: Callable[..., Any], args: tuple, timeout: float) -> Future:
        """Run ``function(*args)`` in a worker, killed if it runs longer than ``timeout`` seconds."""
        task = _Task(function, tuple(args), float(timeout))
        with self._lock:
            if not self.alive:
                raise WorkersClosed("the grading workers were stopped")
            self._queue.append(task)
            self._start_failed = False  # a new task tries to start workers again
        self._wake()
        return task.future

    def wait_ready(self) -> None:
        """Block until every worker is up (or starting one failed, or the workers were stopped)."""
        with self._changed:
            self._changed.wait_for(
                lambda: (
                    self._closing
                    or self._start_failed
                    or not self._thread.is_alive()
                    or sum(worker.ready for worker in self._workers) >= self._count
                )
            )

    def pids(self) -> list[int]:
        with self._lock:
            return sorted(worker.process.pid for worker in self._workers)

    def close(self) -> None:
        """Kill the workers; tasks not yet answered fail with :class:`WorkersClosed`."""
        with self._lock:
            self._closing = True
        self._wake()
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (the supervisor wakes anyway) or already closed
            self._wake_writer.send(b"x")

    # --- the supervisor thread -------------------------------------------------------------------

    def _supervise(self) -> None:
        try:
            while not self._closing:
                self._start_missing()
                self._dispatch()
                self._wait_and_handle()
        finally:
            self._shut_down()

    def _start_missing(self) -> None:
        while not self._start_failed and len(self._workers) < self._count:
            try:
                worker = _Worker(self._context, self._initializer)
            except Exception:
                self._failed_to_start()
                return
            with self._lock:
                self._workers.append(worker)

    def _dispatch(self) -> None:
        idle = [worker for worker in self._workers if worker.ready and worker.task is None]
        while idle:
            with self._lock:
                if not self._queue:
                    return
                task = self._queue.popleft()
            if not task.claim():
                continue  # cancelled while queued
            worker = idle.pop()
            try:
                worker.give(task)
            except (OSError, ValueError):  # the worker is gone: the task goes first to the next one
                with self._lock:
                    self._queue.appendleft(task)
                self._bury(worker, WorkerDied("grading worker exited"))
            except Exception as error:  # the task cannot be pickled
                task.future.set_exception(error)
                idle.append(worker)

    def _wait_and_handle(self) -> None:
        now = time.monotonic()
        deadline = min((worker.deadline for worker in self._workers), default=math.inf)
        timeout = None if deadline == math.inf else max(0.0, deadline - now)
        by_connection = {worker.connection: worker for worker in self._workers}
        by_sentinel = {worker.process.sentinel: worker for worker in self._workers}
        ready = wait([self._wake_reader, *by_connection, *by_sentinel], timeout=timeout)
        if self._wake_reader in ready:
            self._drain_wake()
        for connection in ready:  # answers first: a worker may answer and then die
            if connection in by_connection:
                self._receive(by_connection[connection])
        for sentinel in ready:
            worker = by_sentinel.get(sentinel)
            if worker is not None and worker in self._workers:
                self._bury(worker, WorkerDied(f"grading worker {worker.process.pid} exited"))
        self._expire(time.monotonic())

    def _drain_wake(self) -> None:
        try:
            while self._wake_reader.recv(4096):
                pass
        except OSError:  # nothing left to read
            pass

    def _receive(self, worker: _Worker) -> None:
        try:
            kind, value = worker.connection.recv()
        except Exception:  # the pipe closed (the worker died mid-answer) or carried garbage
            self._bury(worker, WorkerDied(f"grading worker {worker.process.pid} exited"))
            return
        if kind == "ready":
            with self._changed:
                worker.ready = True
                self._changed.notify_all()
            return
        task = worker.take_task()
        if task is not None:
            if kind == "done":
                task.future.set_result(value)
            else:
                task.future.set_exception(value)

    def _expire(self, now: float) -> None:
        for worker in [worker for worker in self._workers if worker.deadline <= now]:
            seconds = worker.task.timeout if worker.task is not None else 0.0
            self._bury(worker, FutureTimeout(f"task overran its {seconds:g} s deadline"))

    def _bury(self, worker: _Worker, error: BaseException) -> None:
        """Stop ``worker`` and fail its task with ``error``; a new worker starts on the next round."""
        with self._changed:
            self._workers.remove(worker)
            self._changed.notify_all()
        worker.stop()
        task = worker.take_task()
        if task is not None:
            task.future.set_exception(error)
        elif not worker.ready:
            self._failed_to_start()

    def _failed_to_start(self) -> None:
        """A worker died before it was ready: fail the queued tasks rather than respawn in a loop."""
        with self._changed:
            self._start_failed = True
            queued, self._queue = list(self._queue), deque()
            self._changed.notify_all()
        for task in queued:
            if task.claim():
                task.future.set_exception(WorkerDied("a grading worker failed to start"))

    def _shut_down(self) -> None:
        with self._changed:
            self._closing = True
            workers, self._workers = self._workers, []
            queued, self._queue = list(self._queue), deque()
            self._changed.notify_all()
        for worker in workers:
            worker.stop()
            task = worker.take_task()
            if task is not None:
                task.future.set_exception(WorkersClosed("the grading workers were stopped"))
        for task in queued:
            if task.claim():
                task.future.set_exception(WorkersClosed("the grading workers were stopped"))
        self._wake_reader.close()
        self._wake_writer.close()


def _serve(connection: Any, initializer: Callable[[], None] | None) -> None:
    """A worker's life: start up, say so, then run tasks until the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if initializer is not None:
        initializer()  # raising ends the process before "ready": the parent stops asking it
    connection.send(("ready", os.getpid()))
    while True:
        try:
            function, args = connection.recv()
        except EOFError:  # the parent closed the pipe or died
            return
        try:
            answer = ("done", function(*args))
        except Exception as error:
            answer = ("raised", error)
        try:
            connection.send(answer)
        except Exception as error:  # an answer that cannot be pickled
            connection.send(("raised", RuntimeError(f"{type(error).__name__}: {error}")))
