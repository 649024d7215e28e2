"""The run's length in RL steps: passes over the data, optimizer steps, eval and checkpoint points."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.full_batches import FullBatches
from infoppo_cli.train.length import (
    FILTER_HEADROOM,
    checkpoint_steps,
    describe_points,
    eval_steps,
    run_length,
)

FLAGS = {"rollout.batch_size": 64, "rollout.n_samples_per_prompt": 8, "train.batch_size": 128}


def test_the_paper_shaped_run_over_dapo_math():
    length = run_length(FLAGS, 1050, 17398)
    assert (length.passes, length.optimizer_steps, length.responses) == (4, 4200, 537_600)
    assert "3.86 x 17398 prompts" in length.describe_passes()


def test_dynamic_filtering_plans_headroom_for_dropped_groups():
    flags = {
        **FLAGS,
        "rollout.batch_size": 512,
        "train.batch_size": 512,
        "algo.dynamic_filtering_enable": True,
    }
    length = run_length(flags, 1050, 17398)
    # a pass keeps 1 group in 10 at worst: 1739 groups, 3 batches of 512 (the rest dropped, full_batches)
    assert length.passes == math.ceil(1050 / (17398 // (512 * FILTER_HEADROOM))) == 350
    assert "headroom" in length.describe_passes()


@pytest.mark.parametrize(
    ("flags", "steps", "rows", "message"),
    [
        ({**FLAGS, "train.batch_size": 1024}, 10, 1000, "fewer than one optimizer step"),
        (FLAGS, 0, 1000, "--steps must be an integer >= 1"),
        ({**FLAGS, "rollout.batch_size": 0}, 10, 1000, "rollout.batch_size must be an integer >= 1"),
        ({**FLAGS, "train.batch_size": "32.5"}, 10, 1000, "train.batch_size must be an integer >= 1"),
    ],
)
def test_a_run_that_could_never_update_is_refused(flags, steps, rows, message):
    with pytest.raises(UsageError, match=message):
        run_length(flags, steps, rows)


def test_data_smaller_than_one_batch_is_carried_over_passes():
    """63 prompts and batches of 64: each batch is completed from the next pass, whose 62 prompts left
    over are dropped (``full_batches``): two passes a batch."""
    length = run_length(FLAGS, 10, 63)
    assert length.passes == 20
    assert "completed from the next" in length.describe_passes()


@given(steps=st.integers(1, 5000), rows=st.integers(1, 10**6), batch=st.integers(1, 1024))
def test_planned_passes_always_cover_the_steps(steps, rows, batch):
    flags = {**FLAGS, "rollout.batch_size": batch, "train.batch_size": 1}
    length = run_length(flags, steps, rows)  # rows < batch too: batches carry over passes
    assert length.passes * rows >= steps * batch


def _passes_full_batches_take(steps: int, batch: int, rows: int) -> int:
    """Passes over ``rows`` prompts (one response each) in which upstream's loop, drawing ``batch``
    prompts at a time through :class:`FullBatches`, makes ``steps`` RL steps."""
    pass_left = SimpleNamespace(prompts=rows)

    def generate_samples(**kwargs):
        drawn = min(batch, pass_left.prompts)
        pass_left.prompts -= drawn
        return [0] * drawn, None, drawn, drawn < batch  # exhausted once a draw comes up short

    full = FullBatches(generate_samples, batch_responses=batch, samples_per_prompt=1)
    made = passes = 0
    while made < steps:
        passes, pass_left.prompts = passes + 1, rows
        exhausted = False
        while not exhausted and made < steps:
            samples, _, _, exhausted = full()
            made += bool(samples)
    return passes


@given(steps=st.integers(1, 200), rows=st.integers(1, 500), batch=st.integers(1, 64))
def test_planned_passes_are_the_passes_full_batches_take(steps, rows, batch):
    flags = {**FLAGS, "rollout.batch_size": batch, "train.batch_size": 1}
    assert run_length(flags, steps, rows).passes == _passes_full_batches_take(steps, batch, rows)


@given(steps=st.integers(1, 3000), every=st.integers(1, 100), before=st.booleans())
def test_eval_points_start_at_the_base_model_and_end_at_the_last_step(steps, every, before):
    points = eval_steps(steps, every, before)
    assert points == sorted(set(points)) and points[-1] == steps
    assert (points[0] == 0) == before
    assert all(p % every == 0 or p == steps for p in points if p)


def test_checkpoints_every_n_steps_and_at_the_last():
    assert checkpoint_steps(12, 5) == [5, 10, 12]
    assert checkpoint_steps(10, 5) == [5, 10]
    assert checkpoint_steps(10, -1) == [] and checkpoint_steps(10, "4") == [4, 8, 10]  # --set gives text


def test_long_point_lists_are_shortened():
    assert describe_points(list(range(0, 1051, 5))) == "0, 5, 10, 15, 20, 25, ..., 1050 (211 points)"
    assert describe_points([]) == "none"
