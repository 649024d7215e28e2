"""The learning-rate schedule: the paper's 10 RL warm-up steps in OpenRLHF's units, constant after."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.train.length import run_length
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
    # 64 prompts x 8 samples / 128 per optimizer step = 4 optimizer steps per RL step; the preset's
    # 1050 RL steps are 4200 optimizer steps: the schedule's length (the trainer's max_steps)
    assert (p.warmup.optimizer_steps_per_rl_step, p.warmup.total_optimizer_steps) == (4, 4200)
    assert p.warmup.optimizer_steps == 40 == math.ceil(4200 * p.flags["actor.lr_warmup_ratio"])
    assert p.infotime["total_optimizer_steps"] == 4200 and p.infotime["rl_steps"] == 1050
    assert p.flags["actor.lr_scheduler"] == "constant_with_warmup"
    assert p.flags["critic.lr_scheduler"] == "constant" and p.flags["critic.lr_warmup_ratio"] == 0.0
    assert "10 RL steps = 40 optimizer steps" in p.warmup.describe()


def test_dapo_uses_its_official_shape_for_the_same_ten_rl_steps(prompts):
    p = plan(prompts, "dapo")
    # 512 prompts x 16 / 512 per optimizer step = 16 optimizer steps per RL step, same 1050 RL steps
    assert p.warmup.optimizer_steps_per_rl_step == 16 and p.warmup.total_optimizer_steps == 16800
    assert p.warmup.optimizer_steps == 160 and not p.warmup.covers_run
    assert p.flags["actor.lr_scheduler"] == "constant_with_warmup" and "critic.lr_scheduler" not in p.flags


def test_a_short_run_warms_up_all_the_way_and_says_so(prompts):
    p = plan_training(TrainRequest(preset="qwen3-4b", data=prompts, steps=5))
    assert p.warmup.optimizer_steps == p.warmup.total_optimizer_steps == 20 and p.warmup.covers_run
    assert any("warm-up covers the whole 5-step run" in warning for warning in p.warnings)


def test_epochs_count_in_optimizer_steps_per_rl_step(prompts):
    p = plan(prompts, "infoppo", "data.max_samples=500", "train.max_epochs=2")
    # an RL step is 4 x 2 = 8 optimizer steps; 10 of them warm up
    assert p.length.prompts == 500 and p.warmup.optimizer_steps_per_rl_step == 8
    assert p.warmup.optimizer_steps == 80 and p.warmup.total_optimizer_steps == 1050 * 8


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
    assert p.length.prompts == 2000 and p.flags["train.num_episodes"] == 34  # 31 batches a pass


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 100_000),
    batch=st.integers(1, 1024),
    n=st.integers(1, 32),
    train_batch=st.integers(1, 4096),
    epochs=st.integers(1, 4),
    steps=st.integers(1, 2000),
    warmup=st.integers(0, 50),
)
def test_openrlhf_warms_up_for_exactly_the_planned_steps(rows, batch, n, train_batch, epochs, steps, warmup):
    flags = {
        "rollout.batch_size": batch,
        "rollout.n_samples_per_prompt": n,
        "train.batch_size": train_batch,
        "train.max_epochs": epochs,
    }
    per_step = batch * n // train_batch * epochs
    if per_step < 1:  # fewer prompts than a batch is fine: batches carry over passes
        with pytest.raises(UsageError, match="never update the model"):
            run_length(flags, steps, rows)
        return
    w = warmup_plan(run_length(flags, steps, rows), warmup)
    total = steps * per_step
    assert w.total_optimizer_steps == total and 0.0 <= w.ratio <= 1.0
    # what openrlhf/utils/deepspeed/deepspeed.py computes from the ratio and the trainer's max_steps
    assert math.ceil(total * w.ratio) == min(warmup * per_step, total)
