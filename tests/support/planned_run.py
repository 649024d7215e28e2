"""What a tiny-cpu run's plan promised, read back from its ``metrics.jsonl``: the end-to-end tests that
train a method check it with ``assert_the_planned_program_ran`` (a wrong program fails there)."""

from __future__ import annotations

import math

import pytest

from infoppo_cli.rundir import metric_number

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
    assert trained, "no trained step in the metrics"
    for record in trained:
        step = record["step"]
        assert number(record, "optimizer_steps") == OPTIMIZER_STEPS_PER_RL_STEP * step, record
        assert number(record, "responses_trained") == 128 and number(record, "prompts_trained") == 16
        accuracy, reward = number(record, "accuracy"), number(record, "reward_mean_kept")
        expected = 2 * accuracy - 1 if method in SIGNED else accuracy  # responses stay under the buffer
        assert reward == pytest.approx(expected, abs=1e-6), (method, record)
        assert number(record, "grad_norm") > 0
        if method == "dapo-ft":  # the top 20% of each micro-batch's tokens, k rounded up
            assert 0.2 <= number(record, "grad_token_frac") <= 0.25
