"""What ``infoppo train`` says while it trains: one line per RL step and per eval, with the time left.

The events come from the trainer (``openrlhf_adapter/progress.py``) as marker lines in the launch
process's output. :class:`RunClock` keeps the steps' and evals' durations and turns each event into
the line the terminal and ``train.log`` show; the time left is estimated from the steps so far.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from infoppo_cli.openrlhf_adapter.progress import MARKER

ETA_FROM = 600.0
"""A step line gives the clock time the run should end at when that is this many seconds away or more."""
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
RAY_PREFIX = re.compile(r"^\((?:[\w.]+ )?pid=\d+(?:, ip=[\w.:-]+)?\) ")
"""What Ray puts before a worker's line: ``(InfoPPOTrainer pid=123) `` or ``(pid=123) ``."""
BAR = re.compile(r"^[^|]*?:\s*(\d{1,3})%\|[^|]*\|\s*[\d.]+[kMG]?/[\d.?]+[kMG]?\s*\[[^\]]*\]")
"""A ``tqdm`` bar's drawing (description, percentage, bar, count, ``[times, rate, postfix]``)."""


def log_line(line: str) -> str | None:
    """A line of output as a log file should hold it (``None``: nothing worth keeping, e.g. a blank
    line). Colour codes go; of a line that a progress bar redrew with carriage returns only its last
    drawing is kept, with the Ray worker's prefix; a bar's drawing is kept only once it is complete
    (100%), and what follows it on the same line (a warning printed while it was drawn) is kept too."""
    text = ANSI.sub("", line).rstrip("\r\n")
    prefix_match = RAY_PREFIX.match(text)
    prefix = prefix_match.group(0) if prefix_match else ""
    drawn = [part for part in text[len(prefix) :].split("\r") if part.strip()]
    if not drawn:  # a blank line (of a worker's: its prefix alone)
        return None
    body = drawn[-1]
    bar = BAR.match(body)
    if bar is not None:
        rest = body[bar.end() :].strip()
        if int(bar.group(1)) < 100:
            return prefix + rest if rest else None
    return prefix + body


def parse_event(line: str) -> dict[str, Any] | None:
    """The trainer's event in an output line (Ray's ``(Actor pid=N)`` prefix before it), else ``None``."""
    at = line.find(MARKER)
    if at < 0:
        return None
    try:
        event = json.loads(line[at + len(MARKER) :])
    except ValueError:
        return None
    return event if isinstance(event, dict) and "event" in event else None


def duration_text(seconds: float | None) -> str:
    """``4.2s``, ``38s``, ``3m05s`` or ``2h07m`` (``?`` for no value)."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    if seconds < 9.95:  # what rounds to 10.0 is written 10s
        return f"{seconds:.1f}s"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def time_left(
    step_seconds: list[float], eval_seconds: list[float], steps_left: int, evals_left: int
) -> float | None:
    """Seconds until the run ends: the steps left at the mean time of the steps so far (the first
    left out once later ones are known: it carries start-up work), plus the evals left at the mean
    time of the evals so far. ``None`` before any step has been timed."""
    if not step_seconds:
        return None
    typical = step_seconds[1:] if len(step_seconds) > 1 else step_seconds
    left = _mean(typical) * max(steps_left, 0)
    if eval_seconds:
        left += _mean(eval_seconds) * max(evals_left, 0)
    return left


def step_line(event: dict[str, Any], left: float | None, now: float | None = None) -> str:
    """``step 2/40  reward 0.398  accuracy 39.8%  response 7.0 tokens  took 1m05s  left ~42m (ETA 07:40)``."""
    steps = event.get("steps")
    parts = [f"step {event['step']}/{steps}" if steps else f"step {event['step']}"]
    if event.get("reward") is not None:
        parts.append(f"reward {event['reward']:.3f}")
    if event.get("accuracy") is not None:
        parts.append(f"accuracy {100 * event['accuracy']:.1f}%")
    if event.get("length") is not None:
        parts.append(f"response {event['length']:.1f} tokens")
    parts.append(f"took {duration_text(event.get('seconds'))}")
    if left is not None and left > 0:
        parts.append(f"left ~{duration_text(left)}")
    if left is not None and left >= ETA_FROM:
        ends = time.strftime("%H:%M", time.localtime((time.time() if now is None else now) + left))
        parts[-1] += f" (ETA {ends})"
    return "  ".join(parts)


def eval_line(event: dict[str, Any]) -> str:
    """``eval at step 3: arithmetic 52.7%  took 8.4s`` (``the base model`` at step 0)."""
    step = event["step"]
    where = "eval of the base model (step 0)" if step == 0 else f"eval at step {step}"
    scores = ", ".join(f"{bench} {value:.1f}%" for bench, value in (event.get("accuracy") or {}).items())
    return f"{where}: {scores or 'no accuracy logged'}  took {duration_text(event.get('seconds'))}"


def resumed_line(done: int, steps: int | None) -> str:
    """``resumed after step 4 of 6: 2 RL steps left`` (``done``: the step of the checkpoint loaded)."""
    if not steps:
        return f"resumed after step {done} (the run's length is unknown)"
    left = steps - done
    if left <= 0:
        return f"resumed after step {done} of {steps}: no RL step left to train"
    return f"resumed after step {done} of {steps}: {left} RL step{'s' if left > 1 else ''} left"


@dataclass
class RunClock:
    """The durations seen so far and the run's length, from the trainer's events."""

    steps: int | None = None
    step_seconds: list[float] = field(default_factory=list)
    eval_seconds: list[float] = field(default_factory=list)
    last_step: int = 0
    evals_left: int = 0

    def left(self) -> float | None:
        """Seconds left, estimated (``None`` before any step, or for a run of unplanned length)."""
        if not self.steps:
            return None
        return time_left(self.step_seconds, self.eval_seconds, self.steps - self.last_step, self.evals_left)

    def take(self, event: dict[str, Any], now: float | None = None) -> str | None:
        """Note ``event``; the line it makes for the terminal and the log (``None`` for a phase)."""
        kind = event.get("event")
        if kind == "start":
            self.steps = event.get("steps") or None
            self.last_step = int(event.get("step") or 0)
            self.evals_left = int(event.get("evals_left") or 0)
            if self.last_step:
                return resumed_line(self.last_step, self.steps)
            return f"training started: {self.steps or '?'} RL steps in all"
        if kind == "step":
            self.last_step = int(event["step"])
            self.steps = event.get("steps") or self.steps
            self.evals_left = int(event.get("evals_left") or 0)
            if isinstance(event.get("seconds"), int | float):
                self.step_seconds.append(float(event["seconds"]))
            return step_line(event, self.left(), now)
        if kind == "eval":
            self.evals_left = int(event.get("evals_left") or 0)
            if isinstance(event.get("seconds"), int | float):
                self.eval_seconds.append(float(event["seconds"]))
            return eval_line(event)
        return None
