"""``infoppo train --preset tiny-cpu`` end to end, as a user runs it, on this machine's CPU.

The real entry point in a child process: the plan, the launch, OpenRLHF's ``train()`` and trainer,
its sample generator and dynamic filtering, the CPU rollout engine (which grades with infoppo's
reward and receives the actor's weights every step), infoppo's experience maker, the actor and critic
workers with the CPU strategy, OpenRLHF's ``ppo_train``/``training_step``, the in-training eval (the
task's held-out problems) at step 0 and after, checkpoints and their rotation, ``--resume``, and
``metrics.jsonl``. The task and its warm-started model are built once per session into a temporary
cache.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_process import run_infoppo

from infoppo_cli.rundir import metric_number, read_metrics

pytestmark = pytest.mark.slow

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
    "timing/generation",
    "timing/make_experience",
    "timing/ppo_train",
    "timing/broadcast",
}
SHORT = ["--steps", "2", "--eval-every", "1", "--eval-samples", "2", "--set", "ckpt.save_steps=1"]


@pytest.fixture(autouse=True)
def cached_task(task_cache):
    """The task is built once per session (``conftest.task_cache``); each run finds it there."""
    return task_cache


def train(tmp_path, method: str, *extra: str) -> list[dict]:
    run = tmp_path / "run"
    done = run_infoppo(
        "train",
        "--preset",
        "tiny-cpu",
        "--method",
        method,
        "--output-dir",
        str(run),
        *SHORT,
        *extra,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return read_metrics(run / "metrics.jsonl")


def number(record: dict, key: str) -> float:
    value = metric_number(record.get(key))
    assert value is not None and math.isfinite(value), (key, record.get(key))
    return value


@pytest.mark.parametrize("method", ["infoppo", "dapo"])
def test_a_tiny_run_trains_evaluates_checkpoints_and_resumes(method, tmp_path):
    records = train(tmp_path, method, "--set", "ckpt.max_num=1")
    assert [r["step"] for r in records] == [0, 1, 2]  # the base model's eval, then exactly 2 RL steps
    assert set(records[0]) == {"step"} | {k for k in records[0] if k.startswith("eval_")}
    for record in records:
        assert 0.0 <= number(record, "eval_arithmetic") <= 100.0  # Mean@2 on the held-out problems
    expected = EVERY_METHOD | ({"critic_loss", "info_discount_mean"} if method == "infoppo" else set())
    for record in records[1:]:
        for key in expected:
            number(record, key)
        assert number(record, "clip_lower_mean") <= 1.0 <= number(record, "clip_upper_mean")
        assert number(record, "entropy_mean") > 0 and 0 < number(record, "rho_mean") <= 1
    if method == "dapo":  # DAPO's signed reward, before dynamic filtering
        assert all(-1.0 <= number(r, "reward_mean") <= 1.0 for r in records[1:])

    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["config"]["infotime"]["rl_steps"] == 2
    assert (run / "final" / "model.safetensors").is_file()
    regular = sorted(p.name for p in (run / "ckpt" / "_actor").iterdir() if p.name.startswith("global_step"))
    assert regular == ["global_step2"]  # ckpt.max_num=1: step 1's was rotated out

    resumed = train(tmp_path, method, "--set", "ckpt.max_num=1", "--resume", "--steps", "3")
    assert [r["step"] for r in resumed] == [0, 1, 2, 3]  # continued from step 2's checkpoint to 3
    assert number(resumed[-1], "eval_arithmetic") >= 0.0

    again = run_infoppo("train", "--replay", str(run), "--output-dir", str(tmp_path / "again"), "--dry-run")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "--infotime.rl_steps 3" in again.stdout and "--infotime.device cpu" in again.stdout


def test_every_method_runs_on_the_cpu(tmp_path):
    for method in ("ppo", "dapo-ft", "info-gae", "info-clip"):
        records = train(tmp_path / method, method, "--steps", "1", "--no-eval-before")
        assert [r["step"] for r in records] == [1], method
        number(records[0], "policy_loss")
