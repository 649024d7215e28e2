"""The trainer's progress, told to ``infoppo train`` as marker lines on its standard output.

The single controller (``InfoPPOTrainer``, a Ray actor) prints one line per event: the run's start, each
phase of a step (generating, training, evaluating) and how far it is, each finished step with its
reward and response length, each finished eval with its accuracies. Ray forwards the actor's output to
the launch process, whose output ``infoppo train`` reads (``train/output.py``): it turns the events into
its per-step lines and progress bar, and everything else into ``train.log``.

OpenRLHF's own progress bars in this process are folded in: the "Generate samples" bar of its sample
generator becomes the phase's progress, and the "Episode" bar (which counts a pass over the prompts,
not the run's RL steps) is silenced.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from infoppo_cli.openrlhf_adapter.metrics_log import metric_number

MARKER = "@@infoppo-progress "
"""What starts an event line (after Ray's ``(InfoPPOTrainer pid=N)`` prefix); JSON follows."""


def emit(event: dict[str, Any]) -> None:
    """Print ``event`` as one marker line, at once (Ray forwards what the actor has flushed)."""
    print(MARKER + json.dumps(event, default=float), flush=True)


def _finite(value: Any) -> float | None:
    """A metric's value as a float, or ``None`` for what is not a finite number (nothing to show)."""
    number = metric_number(value)
    return number if number is not None and math.isfinite(number) else None


class TrainerProgress:
    """The events of one training run; ``bar`` stands in for OpenRLHF's ``tqdm`` bars."""

    def __init__(
        self,
        say: Callable[[dict[str, Any]], None] = emit,
        clock: Callable[[], float] = time.monotonic,
        interval: float = 2.0,
    ) -> None:
        self.say = say
        self.clock = clock
        self.interval = interval
        self.phase: dict[str, Any] | None = None
        self._said_at = -math.inf
        self._step_started: float | None = None
        self._eval_started: float | None = None

    def begin(self, step: int, steps: int, evals_left: int) -> None:
        """The trainer is up: the run goes on from ``step`` (0, or a resumed run's) to ``steps``."""
        self.say({"event": "start", "step": step, "steps": steps, "evals_left": evals_left})

    def start_phase(self, name: str, step: int, total: int | None) -> None:
        """A phase of ``step`` begins; ``total`` prompts to go (``None``: no count, e.g. training)."""
        if name == "generate" and self._step_started is None:
            self._step_started = self.clock()
        if name == "eval":
            self._eval_started = self.clock()
        self.phase = {"event": "phase", "phase": name, "step": step, "done": 0, "total": total}
        self._tell(force=True)

    def advance(self, count: float = 1) -> None:
        """``count`` more prompts of the current phase are done (told at most every ``interval`` s)."""
        if self.phase is None:
            return
        done = self.phase["done"] + int(count)
        total = self.phase["total"]
        self.phase["done"] = min(done, total) if total else done
        self._tell()

    def _tell(self, force: bool = False) -> None:
        now = self.clock()
        if self.phase is not None and (force or now - self._said_at >= self.interval):
            self._said_at = now
            self.say(dict(self.phase))

    def step_done(self, step: int, steps: int, record: dict[str, Any], evals_left: int) -> None:
        """``step`` is trained and saved: its reward, accuracy and response length, and its time from
        the start of its generation (its eval, which follows, is timed on its own)."""
        started, self._step_started = self._step_started, None
        event: dict[str, Any] = {"event": "step", "step": step, "steps": steps, "evals_left": evals_left}
        event["seconds"] = self.clock() - started if started is not None else None
        for ours, key in (
            ("reward", "reward_mean"),
            ("accuracy", "accuracy"),
            ("length", "response_length_mean"),
        ):
            value = _finite(record.get(key))
            if value is not None:
                event[ours] = value
        self.phase = None
        self.say(event)

    def eval_done(self, step: int, accuracies: dict[str, float], evals_left: int) -> None:
        """The eval of ``step`` is done: accuracy in percent per benchmark."""
        started, self._eval_started = self._eval_started, None
        seconds = self.clock() - started if started is not None else None
        found = {bench: value for bench, value in accuracies.items() if _finite(value) is not None}
        event = {"event": "eval", "step": step, "seconds": seconds, "accuracy": found}
        self.phase = None
        self.say({**event, "evals_left": evals_left})

    def bar(self, iterable: Any = None, *args: Any, **kwargs: Any) -> FoldedBar:
        """A ``tqdm`` stand-in whose updates advance the current phase."""
        return FoldedBar(self, iterable)


class FoldedBar:
    """What OpenRLHF's sample generator calls on its ``tqdm`` bar, told to :class:`TrainerProgress`."""

    def __init__(self, progress: TrainerProgress | None, iterable: Any = None) -> None:
        self.progress = progress
        self.iterable = iterable
        self.n = 0

    def __iter__(self):
        for item in self.iterable or ():
            yield item
            self.update()

    def update(self, n: float = 1) -> None:
        self.n += n
        if self.progress is not None:
            self.progress.advance(n)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> FoldedBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def silent_bar(iterable: Any = None, *args: Any, **kwargs: Any) -> FoldedBar:
    """A ``tqdm`` stand-in that shows nothing (OpenRLHF's "Episode" bar)."""
    return FoldedBar(None, iterable)


def fold_upstream_bars(progress: TrainerProgress) -> None:
    """In this process (the trainer's): OpenRLHF's sample generator's bars count the current phase's
    prompts, its episode bar is silenced."""
    import openrlhf.trainer.ppo_trainer as trainer_module  # lazy: kept off the driver
    import openrlhf.trainer.ppo_utils.samples_generator as generator_module  # lazy: kept off the driver

    generator_module.tqdm = progress.bar
    trainer_module.tqdm = silent_bar
