"""metrics.jsonl: fixed names for the paper's diagnostics, crash-tolerant reading."""

from __future__ import annotations

import json
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.components import REWARDS
from infoppo_cli.openrlhf_adapter.metrics_log import (
    TrainMetricsLog,
    bench_accuracies,
    eval_fields,
    step_record,
)
from infoppo_cli.rundir import metric_number, read_metrics

BINARY, SIGNED = REWARDS["binary"].values, REWARDS["signed"].values


def test_step_record_maps_openrlhf_keys():
    status = {
        "rollout/reward_mean": 0.5,
        "rollout/response_length_mean": 812.0,
        "policy_loss": torch.tensor(-0.1),
        "critic_loss": 0.3,
        "rho_mean": 0.42,
        "info_discount_mean": 0.7,
        "kl": 0.0,
        "generated_samples": ["text", 1.0],
        "nan_metric": float("nan"),
    }
    record = step_record(5, status)
    assert record["step"] == 5 and record["reward_mean"] == 0.5 and record["response_length_mean"] == 812.0
    assert record["policy_loss"] == pytest.approx(-0.1) and record["rho_mean"] == 0.42
    assert record["kl"] == 0.0 and "generated_samples" not in record
    assert math.isnan(record["nan_metric"])  # a diverged value is data, not dropped
    assert "rollout/reward_mean" not in record  # not repeated under its OpenRLHF name
    fixed = step_record(1, {}, fixed_clip=(0.2, 0.28))
    assert fixed["clip_lower_mean"] == pytest.approx(0.8) and fixed["clip_upper_mean"] == pytest.approx(1.28)


def test_eval_fields_give_percent_accuracy():
    fields = eval_fields(
        {"eval_aime24_pass1": 0.25, "eval_aime24_pass4": 0.5, "eval_num_samples": 120}, BINARY
    )
    assert fields["eval_aime24"] == 25.0 and fields["eval_aime24_pass_at_4_pct"] == 50.0


def test_every_eval_key_says_what_it_holds_a_mean_reward_is_never_called_pass1():
    """A DAPO run (+1/-1 rewards) at 32% accuracy logs a mean reward of -0.36: upstream calls it
    ``eval_<bench>_pass1``, which reads as an accuracy."""
    logs = {
        "eval_arithmetic_pass1": -0.36,
        "eval_arithmetic_pass8": 0.5,
        "eval_arithmetic_truncated_rate": 0.0,
    }
    fields = eval_fields(logs, SIGNED)
    assert fields["eval_arithmetic"] == pytest.approx(32.0)  # Mean@k accuracy, percent
    assert fields["eval_arithmetic_reward_mean"] == -0.36
    assert fields["eval_arithmetic_pass_at_8_pct"] == pytest.approx(75.0)  # best of 8 rewards, as pass@8
    assert not [key for key in fields if key.endswith(("_pass1", "_pass8"))]
    assert eval_fields(fields, SIGNED) == fields  # translated names are kept as they are


@given(
    st.floats(0.0, 1.0),
    st.sampled_from([BINARY, SIGNED]),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12),
)
def test_the_accuracy_and_the_mean_reward_are_one_value_on_two_scales(share, rewards, bench):
    correct, otherwise = rewards
    reward_mean = otherwise + share * (correct - otherwise)  # ``share`` of the samples correct
    fields = eval_fields({f"eval_{bench}_pass1": reward_mean}, rewards)
    assert fields[f"eval_{bench}"] == pytest.approx(100.0 * share, abs=1e-9)
    assert fields[f"eval_{bench}_reward_mean"] == reward_mean
    assert bench_accuracies(fields) == {bench: fields[f"eval_{bench}"]}


def test_an_old_run_s_eval_lines_are_still_read_as_accuracies():
    old_line = {"step": 2, "eval_aime25_pass1": 0.5, "eval_aime25": 50.0, "eval_mean_over_benches": 0.5}
    assert bench_accuracies(old_line) == {"aime25": 50.0}


def test_a_step_is_written_as_it_is_trained_and_its_eval_beside_it(tmp_path):
    """A step's line was held for its eval: a run stopped during that eval lost the step's training
    record for good (its checkpoint was saved, so a resume does not train it again)."""
    path = tmp_path / "m" / "metrics.jsonl"
    log = TrainMetricsLog(path, BINARY)
    log.record_step({"step": 1, "reward_mean": 0.1})
    log.record_step({"step": 2, "reward_mean": 0.2})
    assert len(path.read_text().splitlines()) == 2  # step 2's, before its eval (which a stop may cut)
    log.record_eval(2, {"eval_aime25_pass1": 0.5})
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[2] == {"step": 2, "eval_aime25_reward_mean": 0.5, "eval_aime25": 50.0}
    assert read_metrics(path)[1] == {
        "step": 2,
        "reward_mean": 0.2,
        "eval_aime25_reward_mean": 0.5,
        "eval_aime25": 50.0,
    }


def test_a_resumed_run_marks_its_checkpoint_and_evaluates_again_what_it_retrains(tmp_path):
    path = tmp_path / "m" / "metrics.jsonl"
    first = TrainMetricsLog(path, BINARY)
    first.resumed(0)  # a new run: nothing to supersede, nothing written
    assert not path.exists()
    for step in (1, 2, 3):
        first.record_step({"step": step})
        first.record_eval(step, {"eval_chain_pass1": 0.5})
    again = TrainMetricsLog(path, BINARY)  # killed after step 3; its last checkpoint is step 2's
    again.resumed(2)
    assert again.evaluated_steps() == {1, 2}  # step 3's eval was of weights the run no longer has
    assert [r["step"] for r in read_metrics(path)] == [1, 2]


def test_read_metrics_tolerates_a_torn_line_and_repeated_steps(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(
        '{"step": 2, "reward_mean": 0.2}\n{"step": 1, "reward_mean": 0.1}\n'
        '{"step": 2, "reward_mean": 0.3, "rho_mean": 0.5}\n{"step": 3, "rew'
    )
    assert read_metrics(path) == [
        {"step": 1, "reward_mean": 0.1},
        {"step": 2, "reward_mean": 0.3, "rho_mean": 0.5},
    ]


def test_reward_mean_is_taken_before_dynamic_filtering_when_known():
    status = {
        "rollout/reward_mean": 0.5,
        "rollout/reward_mean_unfiltered": 0.25,
        "rollout/kept_group_frac": 0.5,
    }
    record = step_record(3, status)
    assert record["reward_mean"] == 0.25 and record["reward_mean_kept"] == 0.5
    assert record["kept_group_frac"] == 0.5 and "rollout/reward_mean_unfiltered" not in record
    assert step_record(3, {"rollout/reward_mean": 0.5})["reward_mean"] == 0.5  # no filtering: the same


def test_signed_rewards_give_accuracy_in_percent():
    assert eval_fields({"eval_aime25_pass1": 0.0}, reward_values=SIGNED)["eval_aime25"] == 50.0
    assert eval_fields({"eval_aime25_pass1": -1.0}, reward_values=SIGNED)["eval_aime25"] == 0.0


def test_non_finite_values_are_written_as_standard_json(tmp_path):
    log = TrainMetricsLog(tmp_path / "metrics.jsonl", BINARY)
    log.record_step(step_record(3, {"policy_loss": float("nan"), "critic_loss": float("inf")}))
    log.record_eval(3, {"eval_aime24_pass1": float("-inf")})
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    parsed = {}
    for line in lines:
        parsed |= json.loads(
            line, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}")
        )
    assert parsed["policy_loss"] == "NaN" and parsed["critic_loss"] == "Infinity"
    assert parsed["eval_aime24"] == "-Infinity"
    record = read_metrics(tmp_path / "metrics.jsonl")[0]  # the report reads the text back as numbers
    assert (
        math.isnan(metric_number(record["policy_loss"])) and metric_number(record["critic_loss"]) == math.inf
    )


def test_a_resumed_log_cuts_a_torn_last_line_and_keeps_diverged_values(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "reward_mean": 0.1}\n{"step": 2, "rew')  # the crash before --resume
    log = TrainMetricsLog(path, BINARY)
    diverged = {"step": 2, "reward_mean": float("nan"), "policy_loss": float("-inf")}
    log.record_step(diverged)
    assert path.read_text().splitlines() == [
        '{"step": 1, "reward_mean": 0.1}',
        '{"step": 2, "reward_mean": "NaN", "policy_loss": "-Infinity"}',
    ]
    [_, second] = read_metrics(path)
    assert math.isnan(metric_number(second["reward_mean"]))
    assert metric_number(second["policy_loss"]) == -math.inf


def test_the_mean_over_benchmarks_is_an_accuracy_in_percent_whatever_the_reward():
    """The best checkpoint is chosen on it; it used to be the mean reward (a fraction, or in [-1, 1])."""
    from infoppo_cli.openrlhf_adapter.metrics_log import BENCHMARK_MEAN, eval_record

    logs = {"eval_aime24_pass1": 0.25, "eval_aime25_pass1": 0.75, "eval_aime24_pass16": 0.9}
    assert eval_record(logs, reward_values=BINARY)[BENCHMARK_MEAN] == pytest.approx(50.0)
    signed = {"eval_aime24_pass1": -0.5, "eval_aime25_pass1": 0.5}  # mean rewards of +1/-1
    assert eval_record(signed, reward_values=SIGNED)[BENCHMARK_MEAN] == pytest.approx(50.0)
    assert BENCHMARK_MEAN.endswith("_pct")


def test_upstream_s_pass_rate_counted_in_responses_per_prompt_is_not_recorded():
    """OpenRLHF 0.11.2 logs 800 "percent" for a step that kept all groups of 8 responses: the record keeps
    the share of groups kept instead."""
    record = step_record(1, {"dynamic_filtering_pass_rate": 800.0, "rollout/kept_group_frac": 1.0})
    assert "dynamic_filtering_pass_rate" not in record and record["kept_group_frac"] == 1.0
