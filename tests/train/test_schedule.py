"""The learning-rate schedule: the paper's 10 RL warm-up steps in OpenRLHF's units, constant after."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.train.plan import TrainRequest, plan_training
from infoppo_cli.train.schedule import warmup_plan


@pytest.fixture(scope="module")
def prompts(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "prompts.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(1000)))
    return str(path)


def plan(prompts, method="infoppo", *overrides):
    return plan_training(
        TrainRequest(preset="qwen3-4b", method=method, data=prompts, overrides=list(overrides))
    )


def test_infoppo_warms_up_for_ten_rl_steps_then_stays_constant(prompts):
    p = plan(prompts)
    # 64 prompts x 8 samples / 128 per optimizer step = 4 optimizer steps per RL step;
    # 1000 x 8 // 128 = 62 optimizer steps in all (OpenRLHF's max_steps)
    assert (p.warmup.optimizer_steps_per_rl_step, p.warmup.total_optimizer_steps) == (4, 62)
    assert p.warmup.optimizer_steps == 40 == math.ceil(62 * p.flags["actor.lr_warmup_ratio"])
    assert p.flags["actor.lr_scheduler"] == "constant_with_warmup"
    assert p.flags["critic.lr_scheduler"] == "constant" and p.flags["critic.lr_warmup_ratio"] == 0.0
    assert "10 RL steps = 40 optimizer steps" in p.warmup.describe()


def test_dapo_uses_its_official_shape_for_the_same_ten_rl_steps(prompts):
    p = plan(prompts, "dapo")
    # 512 prompts x 16 / 512 per optimizer step = 16 optimizer steps per RL step
    assert p.warmup.optimizer_steps_per_rl_step == 16 and p.warmup.total_optimizer_steps == 31
    assert p.warmup.optimizer_steps == 31  # the run is shorter than the warm-up: all of it warms up
    assert p.flags["actor.lr_scheduler"] == "constant_with_warmup" and "critic.lr_scheduler" not in p.flags


def test_max_samples_episodes_and_epochs_count(prompts):
    p = plan(prompts, "infoppo", "data.max_samples=500", "train.num_episodes=3", "train.max_epochs=2")
    # 500 prompts x 8 // 128 = 31, x 3 episodes x 2 epochs = 186; an RL step is 4 x 2 = 8 steps
    assert (p.warmup.prompts, p.warmup.total_optimizer_steps) == (500, 186)
    assert p.warmup.optimizer_steps == 80


def test_a_set_ratio_wins(prompts):
    p = plan(prompts, "infoppo", "actor.lr_warmup_ratio=0.01")
    assert float(p.flags["actor.lr_warmup_ratio"]) == 0.01 and p.warmup is None


def test_a_hub_dataset_that_cannot_be_counted_is_refused(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(UsageError, match="cannot count the prompts of Hugging Face dataset 'org/none'"):
        plan_training(TrainRequest(preset="qwen3-4b", data="org/none"))


def test_a_hub_dataset_is_counted_with_datasets(monkeypatch):
    import datasets

    class Builder:
        info = type("Info", (), {"splits": {"train": type("Split", (), {"num_examples": 2000})()}})()

    monkeypatch.setattr(datasets, "load_dataset_builder", lambda name: Builder())
    p = plan_training(TrainRequest(preset="qwen3-4b", data="org/maths"))
    assert p.warmup.prompts == 2000 and p.warmup.total_optimizer_steps == 125


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 100_000),
    batch=st.integers(1, 1024),
    n=st.integers(1, 32),
    train_batch=st.integers(1, 4096),
    epochs=st.integers(1, 4),
    episodes=st.integers(1, 4),
    rl_steps=st.integers(0, 50),
)
def test_openrlhf_warms_up_for_exactly_the_planned_steps(
    rows, batch, n, train_batch, epochs, episodes, rl_steps
):
    flags = {
        "rollout.batch_size": batch,
        "rollout.n_samples_per_prompt": n,
        "train.batch_size": train_batch,
        "train.max_epochs": epochs,
        "train.num_episodes": episodes,
    }
    w = warmup_plan(flags, rl_steps, rows)
    total = max(rows * n // train_batch * episodes * epochs, 1)
    assert w.total_optimizer_steps == total and 0.0 <= w.ratio <= 1.0
    # what openrlhf/utils/deepspeed/deepspeed.py computes from the ratio
    assert math.ceil(total * w.ratio) == min(rl_steps * (batch * n // train_batch * epochs), total)
