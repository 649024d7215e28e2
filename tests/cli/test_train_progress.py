"""`infoppo train`'s terminal while a run trains: the lines, and a bar for the phase in flight."""

from __future__ import annotations

import io

from infoppo_cli.cli import train_progress
from infoppo_cli.cli.console import FittingConsole
from infoppo_cli.cli.train_progress import TrainDisplay, phase_description


def test_a_phase_is_described_by_its_step_what_it_does_and_the_run_s_time_left():
    generate = {"event": "phase", "phase": "generate", "step": 2, "done": 3, "total": 16}
    assert phase_description(generate, 40, 2520.0) == "step 2/40: generating (prompts)  run ~42m00s left"
    assert phase_description({**generate, "phase": "train"}, 40, None) == "step 2/40: training"
    base = {**generate, "phase": "eval", "step": 0}
    assert phase_description(base, 40, None) == "evaluating the base model (prompts)"
    assert phase_description({**base, "step": 5}, None, None) == "step 5: evaluating (prompts)"


def test_without_a_terminal_only_the_lines_are_shown(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(train_progress, "console", FittingConsole(file=out, width=120))
    with TrainDisplay(3) as display:
        display.event({"event": "phase", "phase": "generate", "step": 1, "done": 0, "total": 16}, None, None)
        display.event({"event": "step", "step": 1, "steps": 3}, "step 1/3  took 1.0s  left ~2.0s", 2.0)
        display.output("[yellow]infoppo: interrupted, stopping the Ray workers")
    assert out.getvalue().splitlines() == [
        "step 1/3  took 1.0s  left ~2.0s",
        "[yellow]infoppo: interrupted, stopping the Ray workers",  # the run's text, never markup
    ]


def test_on_a_terminal_a_bar_follows_each_phase_and_goes_when_the_run_ends(monkeypatch):
    out = io.StringIO()
    terminal = FittingConsole(file=out, width=120, force_terminal=True)
    monkeypatch.setattr(train_progress, "console", terminal)
    with TrainDisplay(3) as display:
        assert display._bar is not None

        def task():
            (only,) = display._bar.tasks
            return only

        assert task().description == train_progress.STARTING and task().total is None
        display.event({"event": "phase", "phase": "eval", "step": 0, "done": 5, "total": 200}, None, None)
        assert (task().completed, task().total) == (5, 200)
        display.event({"event": "phase", "phase": "eval", "step": 0, "done": 80, "total": 200}, None, None)
        assert task().completed == 80 and task().description == "evaluating the base model (prompts)"
        display.event({"event": "phase", "phase": "generate", "step": 1, "done": 2, "total": 16}, None, 30.0)
        assert (task().completed, task().total) == (2, 16) and task().description.endswith("run ~30s left")
        display.event({"event": "step", "step": 1, "steps": 3}, "step 1/3  took 9.0s", 20.0)
        assert task().total is None and task().description == "after step 1/3: checkpoint"
        display.event({"event": "eval", "step": 0, "accuracy": {}}, "eval of the base model", None)
        assert task().description == "after the base model's eval"
    assert "step 1/3  took 9.0s" in out.getvalue()
