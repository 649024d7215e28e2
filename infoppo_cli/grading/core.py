"""The one answer grader, shared by the training reward and by evaluation.

Grading has two steps. :func:`extract_answer` finds the final answer with anchors only: the last
``\\boxed{}`` (brace-balanced; earlier boxes are ignored) or DAPO's last ``Answer:`` line, whichever
comes later. A response without either has no answer; numbers elsewhere in the text are never taken
as the answer. math-verify then parses that answer (anchored configs, ``try_extract_without_anchor=False``)
and compares it with the gold as ``verify(gold, prediction)``, in that order.

math-verify bounds its own work with ``signal.alarm``, which only works on a process's main thread and
cannot interrupt a long computation inside C code. :func:`grade_many` therefore grades in worker
processes, where math-verify runs on the main thread, and the parent enforces a hard per-item
deadline on top: a worker that overruns is killed and replaced, and its item is marked ``timeout``.
"""

from __future__ import annotations

import functools
import math
import os
import re
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REASONS = ("correct", "wrong", "no_answer", "timeout", "error")
"""Every value :attr:`Verdict.reason` can take."""

DEFAULT_TIMEOUT = 10.0
"""Seconds one response may take to grade before it is marked ``timeout``."""


@dataclass(frozen=True)
class Verdict:
    """The grade of one response: ``reason`` is one of :data:`REASONS`."""

    correct: bool
    extracted: str | None
    reason: str


# --- extraction ---------------------------------------------------------------------------------------

# Special tokens that survive decoding with skip_special_tokens=False (ChatML, Llama 3, DeepSeek, </s>).
_SPECIAL_TOKEN = re.compile(r"<\|[^<>|\n]{1,64}\|>|<｜[^<>\n]{1,64}｜>|</s>")
_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_LINE = re.compile(r"\banswer\s*:\s*([^\n]+)", re.IGNORECASE)
_MATH_DELIMITERS = re.compile(r"^(?:\$+|\\\(|\\\[)(.*?)(?:\$+|\\\)|\\\])$", re.S)


def final_text(response: str) -> str | None:
    """The part of a response that may hold the final answer, or ``None`` when reasoning never ended.

    Special tokens are removed; with a ``<think>`` block only the text after the last ``</think>``
    counts, and an unclosed ``<think>`` (generation stopped mid-thought) holds no final answer.
    """
    text = _SPECIAL_TOKEN.sub("", response)
    if "</think>" in text:
        return text.rsplit("</think>", 1)[1]
    if "<think>" in text:
        return None
    return text


def extract_answer(response: str) -> str | None:
    """The final answer written in ``response``: the last ``\\boxed{}`` or ``Answer:`` line, or ``None``."""
    found = _locate_answer(response)
    return found[0] if found else None


def _locate_answer(response: str) -> tuple[str, str] | None:
    """``(answer, "box" | "line")`` for the final answer marker of ``response``, or ``None``."""
    text = final_text(response)
    if text is None:
        return None
    box = _last_box(text)
    line = _last_answer_line(text)
    if box is None and line is None:
        return None
    if box is not None and (line is None or box[0] > line[0]):
        content, source = box[1], "box"
    else:
        content, source = line[1], "line"  # type: ignore[index]
    if content is None:  # the last box was never closed: the response was cut mid-answer
        return None
    cleaned = _clean_answer(content)
    return (cleaned, source) if cleaned else None


def _last_box(text: str) -> tuple[int, str | None] | None:
    """Start and content of the last ``\\boxed{…}`` (content ``None`` if its braces never close)."""
    last = None
    for last in _BOX_OPEN.finditer(text):  # noqa: B007 - only the last match is wanted
        pass
    if last is None:
        return None
    depth, index = 1, last.end()
    while index < len(text):
        char = text[index]
        if char == "\\":  # \{ and \} are literal braces, not grouping
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return last.start(), text[last.end() : index]
        index += 1
    return last.start(), None


def _last_answer_line(text: str) -> tuple[int, str] | None:
    last = None
    for last in _ANSWER_LINE.finditer(text):  # noqa: B007 - only the last match is wanted
        pass
    return None if last is None else (last.start(), last.group(1))


def _clean_answer(content: str) -> str:
    """Drop markdown emphasis, a closing full stop and ``$…$`` / ``\\(…\\)`` around an answer."""
    text = content.strip().strip("*").strip().rstrip(".").rstrip()
    match = _MATH_DELIMITERS.fullmatch(text)
    if match:
        text = match.group(1).strip().rstrip(".").rstrip()
    return text


# --- math-verify --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _configs() -> tuple[list[Any], list[Any]]:
    """(gold config, prediction config). The prediction config never extracts without an anchor."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    gold = [LatexExtractionConfig(), ExprExtractionConfig()]
    prediction = [
        LatexExtractionConfig(boxed_match_priority=0, try_extract_without_anchor=False),
        ExprExtractionConfig(try_extract_without_anchor=False),
    ]
    return gold, prediction


@functools.lru_cache(maxsize=4096)
def _parse_gold(gold: str, inner_timeout: int | None) -> list[Any]:
    """Parse a gold answer once per process (cached); ``[]`` when it cannot be parsed."""
    from math_verify import parse

    text = gold.strip().strip("$").strip()
    if not text:
        return []
    config = _configs()[0]
    return parse(f"${text}$", config, parsing_timeout=inner_timeout) or parse(
        text, config, parsing_timeout=inner_timeout
    )


def _parse_prediction(answer: str, source: str, inner_timeout: int | None) -> list[Any]:
    """Parse an extracted answer; an ``Answer:`` line is read as DAPO writes it, then as LaTeX."""
    from math_verify import parse

    config = _configs()[1]
    boxed = "\\boxed{" + answer + "}"
    texts = [boxed] if source == "box" else ["Answer: " + answer, boxed]
    for text in texts:
        parsed = parse(text, config, parsing_timeout=inner_timeout, raise_on_error=True)
        if parsed:
            return parsed
    return []


def _verify(gold: list[Any], prediction: list[Any], inner_timeout: int | None) -> bool:
    from math_verify import verify

    try:
        return bool(verify(gold, prediction, timeout_seconds=inner_timeout, raise_on_error=True))
    except Exception:
        # One failing (gold, prediction) pairing must not hide the others: retry, skipping failures.
        return bool(verify(gold, prediction, timeout_seconds=inner_timeout, raise_on_error=False))


def inner_timeout_seconds(timeout: float) -> int:
    """math-verify's own (whole-second, signal-based) limit for each parse and verify call.

    A fifth of the hard deadline (at least 1 s): a runaway comparison is usually stopped by
    math-verify itself, which is cheaper than killing and restarting the worker.
    """
    return max(1, int(timeout / 5))


def _grade(response: str, gold: str, inner_timeout: int | None) -> Verdict:
    from math_verify.errors import TimeoutException

    found = _locate_answer(response)
    if found is None:
        return Verdict(False, None, "no_answer")
    extracted, source = found
    try:
        gold_parsed = _parse_gold(gold, inner_timeout)
        if not gold_parsed:
            return Verdict(False, extracted, "error")
        prediction = _parse_prediction(extracted, source, inner_timeout)
        if not prediction:
            return Verdict(False, extracted, "wrong")
        correct = _verify(gold_parsed, prediction, inner_timeout)
    except TimeoutException:
        return Verdict(False, extracted, "timeout")
    except Exception:
        return Verdict(False, extracted, "error")
    return Verdict(correct, extracted, "correct" if correct else "wrong")


def grade(response: str, gold: str) -> Verdict:
    """Grade one response in this process (math-verify with the gold first).

    On the main thread math-verify's signal timeouts bound the work; on other threads they cannot be
    used, so nothing bounds it there: grade untrusted responses from threads with :func:`grade_many`.
    """
    on_main = threading.current_thread() is threading.main_thread()
    return _grade(str(response), str(gold), inner_timeout_seconds(DEFAULT_TIMEOUT) if on_main else None)


# --- worker processes ---------------------------------------------------------------------------------

MAX_BATCH = 4
"""Items sent to a worker at once: few, so that one slow item delays few others behind it."""

WORKER_START_LIMIT = 120.0
"""Seconds a worker may take to start (import math-verify) before the pool gives up."""

_READY = "ready"


def default_workers() -> int:
    """All the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _serve() -> None:
    """Entry point of a worker process: grade ``(index, response, gold)`` batches read from stdin.

    Workers are fresh interpreters (not forks) so that a caller's threads, CUDA context or unguarded
    ``__main__`` never leak into them; the protocol uses the stdin/stdout pipes, which are then
    pointed at /dev/null so a stray print cannot corrupt it.
    """
    import logging
    import signal
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # verdicts carry the outcome
    inner_timeout = int(sys.argv[1])
    requests = Connection(os.dup(0), writable=False)
    replies = Connection(os.dup(1), readable=False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    _grade("\\boxed{1}", "1", inner_timeout)  # import and warm math-verify before saying ready
    replies.send(_READY)
    while True:
        try:
            batch = requests.recv()
        except (EOFError, OSError):  # the pool closed its end
            return
        for index, response, gold in batch:
            verdict = _grade(response, gold, inner_timeout)
            try:
                replies.send((index, verdict.correct, verdict.extracted, verdict.reason))
            except OSError:  # the pool has gone away
                return


class _Worker:
    """One grading process and the items it has been sent but not yet answered."""

    def __init__(self, inner_timeout: int) -> None:
        from multiprocessing.connection import Connection

        to_child, to_worker = os.pipe()
        from_worker, from_child = os.pipe()
        # The checkout's root goes last on the child's path: it is only used where infoppo is not installed.
        root = str(Path(__file__).resolve().parents[2])
        entry = (
            f"import sys; sys.path.append({root!r}); from infoppo_cli.grading.core import _serve; _serve()"
        )
        command = [sys.executable, "-c", entry, str(inner_timeout)]
        try:
            self.process = subprocess.Popen(command, stdin=to_child, stdout=from_child)
        finally:
            os.close(to_child)
            os.close(from_child)
        self.requests = Connection(to_worker, readable=False)
        self.conn = Connection(from_worker, writable=False)
        self.started = time.monotonic()
        self.ready = False
        self.outstanding: deque[int] = deque()
        self.deadline = math.inf

    def alive(self) -> bool:
        return self.process.poll() is None

    def dispatch(self, batch: list[tuple[int, str, str]], now: float, timeout: float) -> bool:
        """Send a batch (its clock starts once the worker is ready); ``False`` if the process is gone."""
        self.outstanding.extend(index for index, _, _ in batch)
        self.deadline = now + timeout if self.ready else math.inf
        try:
            self.requests.send(batch)
        except (OSError, ValueError):
            return False
        return True

    def kill(self) -> None:
        """Stop the process at once: a worker holds nothing that needs a clean exit."""
        if self.alive():
            self.process.kill()
        self.process.wait()
        self.requests.close()
        self.conn.close()


class GradingPool:
    """Worker processes that grade ``(response, gold)`` pairs with a hard per-item deadline.

    Workers start on first use (or :meth:`start`) and are reused across :meth:`grade` calls. Several
    threads may call :meth:`grade` at once; each call borrows idle workers, waiting if all are busy.
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.max_workers = max(1, workers or default_workers())
        self.timeout = float(timeout)
        self._inner_timeout = inner_timeout_seconds(self.timeout)
        self._idle: list[_Worker] = []
        self._live = 0
        self._closed = False
        self._cond = threading.Condition()

    def __enter__(self) -> GradingPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        """Start every worker now and wait until they are ready, instead of on first use."""
        workers = self._checkout(self.max_workers)
        try:
            for worker in workers:
                while not worker.ready:
                    self._collect(worker, lambda *_: None, functools.partial(self._startup_failed, worker))
                    if not worker.ready:
                        self._check_startup(worker, time.monotonic())
                        worker.conn.poll(0.05)
        finally:
            self._checkin(workers)

    def worker_pids(self) -> list[int]:
        """Process ids of the idle workers (for diagnostics and tests)."""
        with self._cond:
            return [worker.process.pid for worker in self._idle]

    def close(self) -> None:
        """Stop the idle workers; busy ones stop when their call returns."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()

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

        def report(item: int) -> None:
            if on_done is not None:
                on_done(len(groups[unique[item]]))

        verdicts = self._run(unique, report) if unique else []
        results: list[Verdict] = [Verdict(False, None, "error")] * len(pairs)
        for item, verdict in enumerate(verdicts):
            for position in groups[unique[item]]:
                results[position] = verdict
        return results

    # The scheduler: keep every borrowed worker busy with small batches, wait for a result or the
    # earliest deadline, and replace a worker that overran (its item: timeout) or died (item retried
    # once, then error).
    def _run(self, items: list[tuple[str, str]], report: Callable[[int], None]) -> list[Verdict]:
        from multiprocessing.connection import wait

        results: list[Verdict | None] = [None] * len(items)
        pending = deque(range(len(items)))
        attempts = [0] * len(items)
        workers = self._checkout(min(len(items), self.max_workers))
        batch_size = max(1, min(MAX_BATCH, len(items) // (len(workers) * 4)))
        remaining = len(items)

        def finish(item: int, verdict: Verdict) -> None:
            nonlocal remaining
            results[item] = verdict
            remaining -= 1
            report(item)

        def replace(slot: int, verdict_for_current: Verdict | None) -> None:
            worker = workers[slot]
            if not worker.ready and verdict_for_current is None:
                self._startup_failed(worker)
            current = worker.outstanding.popleft() if worker.outstanding else None
            if current is not None:
                attempts[current] += 1
                if verdict_for_current is not None or attempts[current] >= 2:
                    finish(current, verdict_for_current or Verdict(False, None, "error"))
                else:
                    worker.outstanding.appendleft(current)
            pending.extendleft(reversed(worker.outstanding))
            worker.outstanding.clear()
            worker.kill()
            workers[slot] = self._spawn()

        try:
            while remaining:
                now = time.monotonic()
                for slot, worker in enumerate(workers):
                    if not worker.outstanding and pending:
                        batch = [pending.popleft() for _ in range(min(batch_size, len(pending)))]
                        if not worker.dispatch([(i, *items[i]) for i in batch], now, self.timeout):
                            replace(slot, None)
                watched = [w for w in workers if w.outstanding or not w.ready]
                wake = min(w.deadline if w.ready else w.started + WORKER_START_LIMIT for w in watched)
                ready = wait([w.conn for w in watched], timeout=max(0.0, wake - time.monotonic()))
                for slot, worker in enumerate(workers):
                    if worker.conn in ready:
                        self._collect(worker, finish, functools.partial(replace, slot, None))
                now = time.monotonic()
                for slot, worker in enumerate(workers):
                    self._check_startup(worker, now)
                    if worker.ready and worker.outstanding and worker.deadline <= now:
                        replace(slot, Verdict(False, None, "timeout"))
        finally:
            self._checkin(workers)
        return [verdict or Verdict(False, None, "error") for verdict in results]

    def _collect(
        self, worker: _Worker, finish: Callable[[int, Verdict], None], on_crash: Callable[[], None]
    ) -> None:
        """Read every message waiting from ``worker``; ``on_crash`` if its process has gone."""
        try:
            while worker.conn.poll():
                message = worker.conn.recv()
                now = time.monotonic()
                if message == _READY:
                    worker.ready = True
                else:
                    item, correct, extracted, reason = message
                    expected = worker.outstanding.popleft()
                    if item != expected:  # cannot happen: one in-order pipe per worker
                        raise RuntimeError(f"grading worker answered item {item}, expected {expected}")
                    finish(item, Verdict(bool(correct), extracted, reason))
                worker.deadline = now + self.timeout if worker.outstanding else math.inf
        except (EOFError, OSError):
            on_crash()

    @staticmethod
    def _check_startup(worker: _Worker, now: float) -> None:
        if not worker.ready and now - worker.started > WORKER_START_LIMIT:
            worker.kill()
            raise RuntimeError(f"a grading worker did not start within {WORKER_START_LIMIT:.0f} s")

    @staticmethod
    def _startup_failed(worker: _Worker) -> None:
        worker.kill()
        raise RuntimeError(
            f"a grading worker exited while starting (exit code {worker.process.returncode}); "
            "its error is printed above"
        )

    def _spawn(self) -> _Worker:
        return _Worker(self._inner_timeout)

    def _checkout(self, wanted: int) -> list[_Worker]:
        with self._cond:
            if self._closed:
                raise RuntimeError("this GradingPool is closed")
            while not self._idle and self._live >= self.max_workers:
                self._cond.wait()
            borrowed = self._idle[:wanted]
            del self._idle[:wanted]
            new = min(wanted - len(borrowed), self.max_workers - self._live)
            self._live += new
        created: list[_Worker] = []
        try:
            for _ in range(new):
                created.append(self._spawn())
        except BaseException:
            with self._cond:
                self._live -= new - len(created)
                self._cond.notify_all()
            self._checkin(borrowed + created)
            raise
        return borrowed + created

    def _checkin(self, workers: list[_Worker]) -> None:
        keep, drop = [], []
        for worker in workers:
            healthy = not worker.outstanding and worker.alive()
            (keep if healthy else drop).append(worker)
        with self._cond:
            if self._closed:
                keep, drop = [], drop + keep
            self._idle.extend(keep)
            self._live -= len(drop)
            self._cond.notify_all()
        for worker in drop:
            worker.kill()


def grade_many(
    pairs: Sequence[tuple[str, str]],
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_done: Callable[[int], None] | None = None,
) -> list[Verdict]:
    """Grade ``(response, gold)`` pairs in worker processes (default: one per core), in input order.

    Each pair gets a hard deadline of ``timeout`` seconds: past it the worker is killed and replaced
    and the pair is ``Verdict(False, None, "timeout")``. A worker that dies is replaced and its pair
    retried once (then ``"error"``). Identical pairs are graded once. ``on_done(n)`` reports progress
    as ``n`` more pairs finish.
    """
    if not pairs:
        return []
    distinct = len(set(pairs))
    with GradingPool(workers=min(workers or default_workers(), distinct), timeout=timeout) as pool:
        return pool.grade(pairs, on_done=on_done)
