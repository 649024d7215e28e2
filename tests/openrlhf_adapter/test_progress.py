"""The trainer's progress events, and OpenRLHF's bars folded into them."""

from __future__ import annotations

import pytest

from infoppo_cli.openrlhf_adapter.progress import (
    FoldedBar,
    TrainerProgress,
    emit,
    fold_upstream_bars,
    silent_bar,
)
from infoppo_cli.train.progress import parse_event


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def recorder() -> tuple[TrainerProgress, list[dict], Clock]:
    said: list[dict] = []
    clock = Clock()
    return TrainerProgress(say=said.append, clock=clock, interval=2.0), said, clock


def test_a_step_is_timed_from_its_generation_to_its_save_and_its_eval_on_its_own():
    progress, said, clock = recorder()
    progress.begin(0, 3, evals_left=2)
    progress.start_phase("generate", 1, 16)
    clock.now += 4
    progress.start_phase("train", 1, None)
    clock.now += 6
    record = {"reward_mean": 0.25, "accuracy": 0.25, "response_length_mean": 7.5, "policy_loss": 1.0}
    progress.step_done(1, 3, record, evals_left=1)
    progress.start_phase("eval", 1, 200)
    clock.now += 3
    progress.eval_done(1, {"arithmetic": 40.0, "broken": float("nan")}, evals_left=0)
    kinds = [event["event"] for event in said]
    assert kinds == ["start", "phase", "phase", "step", "phase", "eval"]
    step = said[3]
    assert step == {
        "event": "step",
        "step": 1,
        "steps": 3,
        "evals_left": 1,
        "seconds": 10.0,
        "reward": 0.25,
        "accuracy": 0.25,
        "length": 7.5,
    }
    assert said[5] == {
        "event": "eval",
        "step": 1,
        "seconds": 3.0,
        "accuracy": {"arithmetic": 40.0},
        "evals_left": 0,
    }


def test_bar_updates_advance_the_phase_and_are_told_at_most_every_interval():
    progress, said, clock = recorder()
    progress.start_phase("eval", 0, 32)
    first, second = progress.bar(range(16), desc="Generate samples"), progress.bar(range(16))
    for _ in range(10):
        first.update()
    clock.now += 2.5
    first.set_postfix({"prompts_consumed": 16})
    first.update()  # told: the interval has passed
    for _ in range(40):
        second.update()  # more than the phase's total: it stops at the total
    clock.now += 2.5
    second.update()
    phases = [(event["done"], event["total"]) for event in said]
    assert phases == [(0, 32), (11, 32), (32, 32)]


def test_a_short_batch_s_second_draw_keeps_the_step_s_start():
    progress, said, clock = recorder()
    progress.start_phase("generate", 1, 16)
    clock.now += 5
    progress.start_phase("generate", 1, 16)  # what the actor does not do; the clock still holds
    clock.now += 5
    progress.step_done(1, 2, {}, evals_left=0)
    assert said[-1]["seconds"] == 10.0 and "reward" not in said[-1]


def test_an_event_printed_is_an_event_read(capsys):
    emit({"event": "step", "step": 2, "reward": float("nan")})
    line = capsys.readouterr().out
    event = parse_event(f"(InfoPPOTrainer pid=3) {line}")
    assert event["event"] == "step" and event["reward"] != event["reward"]  # NaN survives


def test_openrlhf_s_bars_are_folded_in_and_its_episode_bar_is_silenced(monkeypatch):
    trainer_module = pytest.importorskip("openrlhf.trainer.ppo_trainer")
    import openrlhf.trainer.ppo_utils.samples_generator as generator_module

    monkeypatch.setattr(trainer_module, "tqdm", trainer_module.tqdm)
    monkeypatch.setattr(generator_module, "tqdm", generator_module.tqdm)
    progress, said, _ = recorder()
    fold_upstream_bars(progress)
    progress.start_phase("generate", 1, 4)
    bar = generator_module.tqdm(range(4), desc="Generate samples")
    assert isinstance(bar, FoldedBar)
    bar.update()
    assert progress.phase["done"] == 1
    episode = trainer_module.tqdm(range(1700), desc="Episode [1/1]", initial=0)
    episode.update(16)
    assert progress.phase["done"] == 1 and list(silent_bar([1, 2])) == [1, 2]
