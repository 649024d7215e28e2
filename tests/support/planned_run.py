"""What a tiny-cpu run's plan promised, read back from its ``metrics.jsonl``: the end-to-end tests that
train a method check it with ``assert_the_planned_program_ran`` (a wrong program fails there)."""

from __future__ import annotations

import math

import pytest

from infoppo_cli.rundir import metric_number
from infoppo_cli.train.methods import method as planned_method

OPTIMIZER_STEPS_PER_RL_STEP = 4  # tiny-cpu: 128 responses per RL step, 32 per optimizer step
SIGNED = {"dapo", "dapo-ft"}  # +1 / -1 rewards; every other method 1 / 0


def number(record: dict, key: str) -> float:
    value = metric_number(record.get(key))
    assert value is not None and math.isfinite(value), (key, record.get(key))
    return value


def assert_the_planned_program_ran(method: str, records: list[dict]) -> None:
    """The optimizer steps the engine took, the trained batch, the reward's values and, for DAPO-FT,
    its gradient share, on every trained step."""
    trained = [r for r in records if "policy_loss" in r]
    overlong_penalty = float(planned_method(method).openrlhf.get("reward.overlong_penalty_factor", 0.0))
    assert trained, "no trained step in the metrics"
    for record in trained:
        step = record["step"]
        assert number(record, "optimizer_steps") == OPTIMIZER_STEPS_PER_RL_STEP * step, record
        assert number(record, "responses_trained") == 128 and number(record, "prompts_trained") == 16
        accuracy, reward = number(record, "accuracy"), number(record, "reward_mean_kept")
        if method in SIGNED:  # DAPO's overlong shaping only lowers a reward, by at most its factor
            expected, most = 2 * accuracy - 1, overlong_penalty
            assert expected - most - 1e-6 <= reward <= expected + 1e-6, (method, record)
        else:
            assert reward == pytest.approx(accuracy, abs=1e-6), (method, record)
        assert number(record, "grad_norm") > 0
        if method == "dapo-ft":  # the top 20% of each micro-batch's tokens, k rounded up
            assert 0.2 <= number(record, "grad_token_frac") <= 0.25


EVERY_METHOD = {
    "reward_mean",
    "reward_mean_kept",
    "kept_group_frac",
    "grade_timeout_frac",
    "response_length_mean",
    "entropy_mean",
    "rho_mean",
    "clip_frac_upper",
    "clip_frac_lower",
    "clip_upper_mean",
    "clip_lower_mean",
    "policy_loss",
    "token_discount_mean",
    "timing/generation",
    "timing/make_experience",
    "timing/ppo_train",
    "timing/broadcast",
}
"""The per-step metrics every method records."""
WITH_A_CRITIC = {"critic_loss", "info_discount_mean"}
"""And those InfoPPO records besides (its critic, its information-time discount)."""


def assert_every_step_recorded(method: str, records: list[dict], bench: str = "arithmetic") -> None:
    """Each trained step's metrics (``EVERY_METHOD``, InfoPPO's ``WITH_A_CRITIC``) are numbers in
    their ranges, and each eval a percentage."""
    expected = EVERY_METHOD | (WITH_A_CRITIC if method == "infoppo" else set())
    for record in records:
        if f"eval_{bench}" in record:
            assert 0.0 <= number(record, f"eval_{bench}") <= 100.0
        if "policy_loss" not in record:
            continue
        for key in expected:
            number(record, key)
        assert number(record, "clip_lower_mean") <= 1.0 <= number(record, "clip_upper_mean")
        assert number(record, "entropy_mean") > 0 and 0 < number(record, "rho_mean") <= 1
        if method in SIGNED:  # the signed reward, before dynamic filtering
            assert -1.0 <= number(record, "reward_mean") <= 1.0
