"""The per-step lines of `infoppo train` and their time left, from the trainer's events."""

from __future__ import annotations

import time

import pytest

from infoppo_cli.openrlhf_adapter.progress import MARKER
from infoppo_cli.train.progress import (
    RunClock,
    duration_text,
    eval_line,
    log_line,
    parse_event,
    step_line,
    time_left,
)


def test_durations_are_short_and_readable():
    assert duration_text(4.25) == "4.2s" and duration_text(38.4) == "38s" and duration_text(9.96) == "10s"
    assert duration_text(185) == "3m05s" and duration_text(7620) == "2h07m"
    assert duration_text(None) == "?" and duration_text(float("nan")) == "?"


def test_the_time_left_is_the_mean_step_without_the_first_plus_the_evals_left():
    assert time_left([], [10.0], steps_left=5, evals_left=1) is None  # nothing timed yet
    assert time_left([30.0], [], steps_left=4, evals_left=2) == 120.0  # one step: it is all there is
    # the first step (start-up work) is left out once later ones are known; evals at their own mean
    assert time_left([90.0, 10.0, 20.0], [6.0, 8.0], steps_left=3, evals_left=2) == pytest.approx(59.0)
    assert time_left([10.0, 10.0], [5.0], steps_left=0, evals_left=0) == 0.0


def test_a_step_line_says_step_reward_accuracy_length_time_and_time_left():
    event = {"step": 2, "steps": 40, "reward": 0.3984, "accuracy": 0.3984, "length": 7.02, "seconds": 65.0}
    assert step_line(event, left=25.0) == (
        "step 2/40  reward 0.398  accuracy 39.8%  response 7.0 tokens  took 1m05s  left ~25s"
    )
    now = time.mktime((2026, 1, 2, 5, 0, 0, 0, 0, -1))
    far = step_line(event, left=2 * 3600 + 40 * 60, now=now)  # an hour or more away: the clock time too
    assert far.endswith("left ~2h40m (ETA 07:40)")
    last = step_line({"step": 3, "steps": 3, "seconds": 1.5}, left=0.0)
    assert last == "step 3/3  took 1.5s"  # nothing left to say: no "left"


def test_an_eval_line_gives_each_benchmark_in_percent():
    line = eval_line({"step": 3, "seconds": 8.4, "accuracy": {"aime24": 31.25, "math500": 80.1}})
    assert line == "eval at step 3: aime24 31.2%, math500 80.1%  took 8.4s"
    assert eval_line({"step": 0, "seconds": 9.0, "accuracy": {"x": 12.5}}).startswith(
        "eval of the base model (step 0): x 12.5%"
    )


def test_the_clock_turns_a_run_s_events_into_lines_with_the_time_left():
    clock = RunClock()
    assert clock.take({"event": "start", "step": 0, "steps": 3, "evals_left": 2}) == (
        "training started: 3 RL steps in all"
    )
    clock.take({"event": "eval", "step": 0, "seconds": 8.0, "accuracy": {"x": 30.0}, "evals_left": 1})
    assert clock.take({"event": "phase", "phase": "generate", "step": 1, "done": 3, "total": 16}) is None
    one = clock.take({"event": "step", "step": 1, "steps": 3, "seconds": 20.0, "evals_left": 1})
    assert one.startswith("step 1/3") and one.endswith("left ~48s")  # 2 steps x 20 s + 1 eval x 8 s
    two = clock.take({"event": "step", "step": 2, "steps": 3, "seconds": 10.0, "evals_left": 1})
    assert two.endswith("left ~18s")  # 1 step at 10 s (the first step left out) + 1 eval x 8 s
    assert clock.left() == pytest.approx(18.0)
    resumed = RunClock()
    assert resumed.take({"event": "start", "step": 4, "steps": 6, "evals_left": 1}) == (
        "resumed after step 4 of 6: 2 RL steps left"
    )


@pytest.mark.parametrize(
    ("done", "steps", "line"),
    [
        (2, 2, "resumed after step 2 of 2: no RL step left to train"),  # never "at step 3" of 2
        (1, 2, "resumed after step 1 of 2: 1 RL step left"),
        (3, None, "resumed after step 3 (the run's length is unknown)"),
    ],
)
def test_the_resume_line_says_where_the_run_is_and_what_is_left(done, steps, line):
    assert RunClock().take({"event": "start", "step": done, "steps": steps}) == line


def test_an_event_is_found_behind_ray_s_prefix_and_nothing_else_is_one():
    line = f'(InfoPPOTrainer pid=12) {MARKER}{{"event": "step", "step": 1}}'
    assert parse_event(line) == {"event": "step", "step": 1}
    assert parse_event("(InfoPPOTrainer pid=12) ✨ Global step 1: {...}") is None
    assert parse_event(f"{MARKER}{{not json") is None and parse_event(f"{MARKER}[1, 2]") is None


def test_a_log_line_loses_colours_and_unfinished_bars_but_keeps_what_it_says():
    assert (
        log_line("\x1b[36m(CpuPolicyModelActor pid=7)\x1b[0m hello\n") == "(CpuPolicyModelActor pid=7) hello"
    )
    redrawn = (
        "(Actor pid=7) forward:   0%|          | 0/8 [00:00<?, ?it/s]\rforward: 100%|##| 8/8 [00:00<00:00]"
    )
    assert log_line(redrawn) == "(Actor pid=7) forward: 100%|##| 8/8 [00:00<00:00]"  # the bar, finished
    assert (
        log_line("(Actor pid=7) Train epoch [1/1]:  25%|##   | 2/8 [00:00<00:00, 15.0it/s, loss=1]") is None
    )
    warned = "Train epoch [1/1]:   0%|   | 0/8 [00:00<?, ?it/s]/x/dataloader.py:759: UserWarning: pin_memory"
    assert log_line(warned) == "/x/dataloader.py:759: UserWarning: pin_memory"  # the warning stays
    assert log_line("(InfoPPOTrainer pid=9) \n") is None and log_line("\n") is None
    assert log_line("a line with 100% | pipes | in it") == "a line with 100% | pipes | in it"
