"""The tiny model and its supervised pass: the schedule's shape, the loss mask, generation settings,
and a few steps that lower the loss on the teacher's responses."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tiny_task import TINY_MODEL, tokenizer_corpus

from infoppo_cli.data.templates import DAPO_PREFIX, DAPO_SUFFIX
from infoppo_cli.tasks.arithmetic import ArithmeticSpec, split_problems
from infoppo_cli.tasks.teacher import TeacherSpec
from infoppo_cli.tasks.tokenizer import train_tokenizer
from infoppo_cli.tasks.warm_start import (
    IGNORE,
    WarmStartSpec,
    _batch,
    _lr_factor,
    new_model,
    single_threaded,
    supervised_pass,
)


@pytest.fixture(scope="module")
def task():
    train, _ = split_problems(ArithmeticSpec(train_size=64, heldout_size=8))
    tokenizer = train_tokenizer(tokenizer_corpus(train), 300, (DAPO_PREFIX, DAPO_SUFFIX))
    return train, tokenizer


@given(st.integers(1, 400), st.integers(0, 400), st.integers(0, 400))
def test_the_schedule_warms_up_holds_the_peak_and_decays_to_its_floor(steps, warmup, decay):
    spec = WarmStartSpec(steps=steps, warmup_steps=max(1, warmup), decay_steps=min(decay, steps))
    factors = [_lr_factor(step, spec) for step in range(steps + 1)]
    assert all(spec.final_lr_fraction - 1e-9 <= f <= 1.0 + 1e-9 for f in factors[spec.warmup_steps :])
    assert all(0 < f <= 1.0 + 1e-9 for f in factors)
    decay_from = max(spec.warmup_steps, steps - spec.decay_steps)
    tail = factors[decay_from:]
    assert all(a >= b - 1e-12 for a, b in zip(tail, tail[1:], strict=False))


def test_only_the_reply_is_learnt_and_padding_is_masked():
    batch = _batch([[5, 6, 7], [5, 6]], [[8, 9], [8, 9, 10, 11]], pad_id=3)
    assert batch["input_ids"].tolist() == [[5, 6, 7, 8, 9, 3], [5, 6, 8, 9, 10, 11]]
    assert batch["labels"].tolist() == [
        [IGNORE, IGNORE, IGNORE, 8, 9, IGNORE],
        [IGNORE, IGNORE, 8, 9, 10, 11],
    ]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1, 1, 0], [1] * 6]


def test_the_model_is_qwen3_and_stops_at_the_end_of_turn(task):
    _, tokenizer = task
    model = new_model(TINY_MODEL, tokenizer)
    assert type(model).__name__ == "Qwen3ForCausalLM"
    assert model.config.vocab_size == len(tokenizer)
    assert model.generation_config.eos_token_id == tokenizer.eos_token_id == model.config.eos_token_id
    assert model.generation_config.pad_token_id == tokenizer.pad_token_id


def test_the_same_seed_gives_the_same_initial_weights(task):
    _, tokenizer = task
    first, second = new_model(TINY_MODEL, tokenizer), new_model(TINY_MODEL, tokenizer)
    assert all((a == b).all() for a, b in zip(first.parameters(), second.parameters(), strict=True))


def test_a_few_steps_lower_the_loss(task):
    train, tokenizer = task
    model = new_model(TINY_MODEL, tokenizer)
    spec = WarmStartSpec(steps=30, clean_steps=30, batch_size=8, learning_rate=1e-2, warmup_steps=3,
                         decay_steps=5)  # fmt: skip
    losses = []
    with single_threaded():
        supervised_pass(model, tokenizer, train, TeacherSpec(), spec, lambda step, loss: losses.append(loss))
    assert len(losses) == 30 and all(math.isfinite(loss) for loss in losses)
    assert sum(losses[-5:]) / 5 < 0.6 * sum(losses[:5]) / 5
    assert not model.training
