"""infoppo's training reward, loaded by OpenRLHF 0.11.2 through ``--reward.remote_url <this file>``.

OpenRLHF imports this file by path inside each vLLM rollout actor and calls :func:`reward_func` from a
worker thread, once per sample. Answers are judged by :mod:`infoppo_cli.grading`, the grader evaluation
uses, in worker processes with a hard per-response deadline (math-verify's own signal timeouts do not
work on a thread). The function never raises and never waits longer than that deadline per response:
anything that goes wrong scores as incorrect and is counted in ``extra_logs``.

Environment variables (the launcher sets the first; the others are tuning knobs):
  ``INFOPPO_RUN_CONFIG``      the run's configuration (``RUN/config.json``), whose method's ``reward``
                              component (``binary``: 1 correct, 0 otherwise; ``signed``: +1 / -1, as DAPO)
                              the rewards follow; without it, or with another reward, an error.
  ``INFOPPO_REWARD_WORKERS``  grading processes per rollout actor (default: 4, at most the cores).
  ``INFOPPO_REWARD_TIMEOUT``  seconds one response may take to grade (default: 10).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import queue
import sys
import threading
from concurrent.futures import Future
from itertools import zip_longest
from pathlib import Path
from typing import Any

try:
    from infoppo_cli import grading
except ImportError:  # loaded by path on a machine where infoppo is not installed: use this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from infoppo_cli import grading
from infoppo_cli.components import REWARDS
from infoppo_cli.openrlhf_adapter.settings import CONFIG_ENV, read_run_config

WORKERS_ENV = "INFOPPO_REWARD_WORKERS"
TIMEOUT_ENV = "INFOPPO_REWARD_TIMEOUT"

_logger = logging.getLogger("infoppo.reward")
_pool: grading.GradingPool | None = None
_pool_lock = threading.Lock()


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        _logger.warning("%s=%r is not a number; using %s", name, os.environ[name], default)
        return default
    return value if value > 0 else default


def reward_style() -> str:
    """The method's ``reward`` component (``binary`` or ``signed``), from the run's configuration at
    ``$INFOPPO_RUN_CONFIG``; none, or another reward, raises ``ValueError`` (a reward on the wrong scale
    would silently train another method)."""
    path = os.environ.get(CONFIG_ENV)
    if not path:
        raise ValueError(f"{CONFIG_ENV} is not set: the reward follows the run's configuration")
    return _configured_reward(path)


@functools.cache
def _configured_reward(path: str) -> str:
    return read_run_config(path).reward


def grading_pool() -> grading.GradingPool:
    """This process's grading workers, started on first use and shared by every calling thread."""
    global _pool
    with _pool_lock:
        if _pool is None:
            workers = int(_env_number(WORKERS_ENV, min(4, grading.default_workers())))
            _pool = grading.GradingPool(workers=workers, timeout=_env_number(TIMEOUT_ENV, 10.0))
            atexit.register(_pool.close)
        return _pool


class _Batches:
    """Grading for every calling thread, one pool call per batch of waiting callers.

    OpenRLHF calls the reward once per response, from many threads at once; graded one call each,
    every response pays a round trip to the workers (about 1 ms, the reward's whole cost on a tiny
    task). Here one thread grades whatever has arrived while the previous batch was graded; a batch
    that raises is graded again caller by caller, so a failure stays with the caller that caused it.
    """

    def __init__(self) -> None:
        self._waiting: queue.SimpleQueue[tuple[list[tuple[str, str]], Future]] = queue.SimpleQueue()
        self._started = False
        self._lock = threading.Lock()

    def grade(self, pairs: list[tuple[str, str]]) -> list[grading.Verdict]:
        result: Future = Future()
        self._waiting.put((pairs, result))
        with self._lock:
            if not self._started:
                threading.Thread(target=self._serve, name="infoppo-grading", daemon=True).start()
                self._started = True
        return result.result()

    def _serve(self) -> None:
        while True:
            batch = [self._waiting.get()]
            while True:
                try:
                    batch.append(self._waiting.get_nowait())
                except queue.Empty:
                    break
            self._grade(batch)

    def _grade(self, batch: list[tuple[list[tuple[str, str]], Future]]) -> None:
        try:
            verdicts = grading_pool().grade([pair for pairs, _ in batch for pair in pairs])
        except Exception as failure:
            if len(batch) > 1:
                for caller in batch:
                    self._grade([caller])
            else:
                batch[0][1].set_exception(failure)
            return
        start = 0
        for pairs, result in batch:
            result.set_result(verdicts[start : start + len(pairs)])
            start += len(pairs)


_batches = _Batches()


def response_text(query: str, prompt: str) -> str:
    """The generated part of ``query`` (OpenRLHF passes prompt and response decoded together)."""
    if prompt and query.startswith(prompt):
        return query[len(prompt) :]
    # Decoding can add a BOS token or respell the start of the prompt; its end is reliable.
    tail = prompt[-200:] if prompt else ""
    at = query.find(tail) if tail else -1
    return query[at + len(tail) :] if at >= 0 else query


def _verdicts(queries: list[Any], prompts: list[Any], labels: list[Any]) -> list[grading.Verdict]:
    pairs, to_grade = [], []
    for index, (query, prompt, label) in enumerate(zip_longest(queries, prompts, labels)):
        gold = "" if label is None else str(label).strip()
        pairs.append((response_text(str(query or ""), str(prompt or "")), gold))
        if gold:
            to_grade.append(index)
    verdicts = [grading.Verdict(False, None, "error")] * len(pairs)  # no gold answer: cannot be correct
    if to_grade:
        graded = _batches.grade([pairs[index] for index in to_grade])
        for index, verdict in zip(to_grade, graded, strict=True):
            verdicts[index] = verdict
    return verdicts


def _verdicts_one_by_one_on_failure(
    queries: list[Any], prompts: list[Any], labels: list[Any], count: int
) -> list[grading.Verdict]:
    """The batch's verdicts; when grading the batch raises, each response is graded alone, so that a
    failure costs only the response that caused it (scored incorrect, counted as ``grade_error``)."""
    try:
        return _verdicts(queries, prompts, labels)
    except Exception:
        if count <= 1:
            _logger.exception("infoppo reward: grading failed; the response scores as incorrect")
            return [grading.Verdict(False, None, "error")] * count
    verdicts = []
    for query, prompt, label in zip_longest(queries, prompts, labels):
        try:
            verdicts += _verdicts([query], [prompt], [label])
        except Exception:
            _logger.exception("infoppo reward: grading one response failed; it scores as incorrect")
            verdicts.append(grading.Verdict(False, None, "error"))
    return verdicts


def reward_func(queries: list[str], prompts: list[str], labels: list[str], **kwargs: Any) -> dict[str, Any]:
    """Score each response 1/0 (or +1/-1): ``{"rewards", "scores", "extra_logs"}`` as OpenRLHF expects.

    ``scores`` are always 1/0 (they feed dynamic filtering); ``extra_logs`` holds per-sample flags
    ``accuracy``, ``answer_found``, ``grade_timeout`` and ``grade_error``.
    """
    import torch  # lazy: the file imports without site-packages (loaded by path)

    queries, prompts, labels = list(queries or []), list(prompts or []), list(labels or [])
    count = max(len(queries), len(prompts), len(labels))
    verdicts = _verdicts_one_by_one_on_failure(queries, prompts, labels, count)
    timeouts = sum(v.reason == "timeout" for v in verdicts)
    if timeouts:  # also logged per step as rollout/grade_timeout_frac (extra_logs "grade_timeout")
        _logger.warning("infoppo reward: %d of %d responses hit the grading deadline", timeouts, count)
    correct = torch.tensor([1.0 if v.correct else 0.0 for v in verdicts])
    if_correct, otherwise = REWARDS[reward_style()].values
    rewards = otherwise + (if_correct - otherwise) * correct

    def flag(condition: Any) -> torch.Tensor:
        return torch.tensor([1.0 if condition(v) else 0.0 for v in verdicts])

    return {
        "rewards": rewards,
        "scores": correct,
        "extra_logs": {
            "accuracy": correct.clone(),
            "answer_found": flag(lambda v: v.extracted is not None),
            "grade_timeout": flag(lambda v: v.reason == "timeout"),
            "grade_error": flag(lambda v: v.reason == "error"),
        },
    }


if os.environ.get(CONFIG_ENV):
    reward_style()  # a bad configuration fails where OpenRLHF loads this file, not per response
