"""``infoppo train --preset tiny-cpu`` end to end, as a user runs it, on this machine's CPU.

The real entry point in a child process: the plan, the launch, OpenRLHF's ``train()`` and trainer,
its sample generator and dynamic filtering, the CPU rollout engine (which grades with infoppo's
reward and receives the actor's weights every step), infoppo's experience maker, the actor and critic
workers training with OpenRLHF's DeepSpeed strategy on DeepSpeed's CPU accelerator (one worker per
model, or two data-parallel ones), OpenRLHF's ``ppo_train``/``training_step``, the in-training eval
(the task's held-out problems) at step 0 and after, DeepSpeed's checkpoints and their rotation,
``--resume``, and ``metrics.jsonl``. The task and its warm-started model are built once per session
into a temporary cache.

Each run is checked against what the plan promised, so that a wrong program fails here: the
optimizer steps the engine took, the reward's values, the trained batch, DAPO-FT's gradient share.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import torch
from cli_process import run_infoppo
from planned_run import OPTIMIZER_STEPS_PER_RL_STEP, assert_the_planned_program_ran, number
from safetensors.torch import load_file

from infoppo_cli.rundir import read_metrics

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
    "token_discount_mean",
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


def assert_the_weights_moved(run, base_model) -> None:
    import os
    import stat

    umask = os.umask(0o022)
    os.umask(umask)
    weights = run / "final" / "model.safetensors"
    assert stat.S_IMODE(weights.stat().st_mode) == 0o666 & ~umask  # as every other file, not 0600
    trained = load_file(str(weights))
    base = load_file(str(base_model / "model.safetensors"))
    assert any(not torch.equal(trained[name], base[name].to(trained[name].dtype)) for name in base)


@pytest.mark.parametrize("method", ["infoppo", "dapo"])
def test_a_tiny_run_trains_evaluates_checkpoints_and_resumes(method, tmp_path, cached_task):
    records = train(tmp_path, method, "--set", "ckpt.max_num=1")
    assert [r["step"] for r in records] == [0, 1, 2]  # the base model's eval, then exactly 2 RL steps
    assert_the_planned_program_ran(method, records)
    assert_the_weights_moved(tmp_path / "run", cached_task.model_dir)
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
    actor_ckpt = run / "ckpt" / "_actor"
    regular = sorted(p.name for p in actor_ckpt.iterdir() if p.name.startswith("global_step"))
    assert regular == ["global_step2"]  # ckpt.max_num=1: step 1's was rotated out
    assert (actor_ckpt / "global_step2" / "mp_rank_00_model_states.pt").is_file()  # DeepSpeed's layout
    assert (actor_ckpt / "zero_to_fp32.py").is_file()

    resumed = train(tmp_path, method, "--set", "ckpt.max_num=1", "--resume", "--steps", "3")
    assert [r["step"] for r in resumed] == [0, 1, 2, 3]  # continued from step 2's checkpoint to 3
    assert number(resumed[-1], "optimizer_steps") == 3 * OPTIMIZER_STEPS_PER_RL_STEP  # the engine's own count
    assert number(resumed[-1], "eval_arithmetic") >= 0.0

    again = run_infoppo("train", "--replay", str(run), "--output-dir", str(tmp_path / "again"), "--dry-run")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "--infotime.rl_steps 3" in again.stdout and "--infotime.device cpu" in again.stdout


# Where each shipped method is trained end to end (each run costs about half a minute of Ray and
# DeepSpeed start-up on 2 cores, so each test trains the method it needs and checks its program).
TRAINED_ELSEWHERE = {
    "infoppo": (
        "openrlhf_adapter/test_end_to_end.py",
        "test_a_tiny_run_trains_evaluates_checkpoints_and_resumes",
    ),
    "dapo": (
        "openrlhf_adapter/test_end_to_end.py",
        "test_a_tiny_run_trains_evaluates_checkpoints_and_resumes",
    ),
    "dapo-ft": ("openrlhf_adapter/test_end_to_end.py", "test_two_data_parallel_workers_per_model"),
    "ppo": ("faults/test_final_eval.py", "test_a_resume_runs_the_eval_a_stop_interrupted"),
    "info-gae": (
        "train/test_output.py",
        "test_a_three_step_cpu_run_is_quiet_shows_each_step_and_logs_everything",
    ),
    "info-clip": (
        "faults/test_run_exposure.py",
        "test_a_run_leaks_no_secret_refuses_strangers_and_leaves_nothing",
    ),
}


def _trains(where: tuple[str, str], method: str) -> bool:
    """Whether the test ``where`` (its file under tests/, its name) names ``method`` and checks its run
    against the plan (``assert_the_planned_program_ran``)."""
    path, name = where
    tree = ast.parse((Path(__file__).parents[1] / path).read_text(encoding="utf-8"))
    test = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
    literals = {node.value for node in ast.walk(test) if isinstance(node, ast.Constant)}
    called = {
        node.func.id
        for node in ast.walk(test)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return method in literals and "assert_the_planned_program_ran" in called


def test_every_method_runs_on_the_cpu(tmp_path):
    """A method added to methods.toml is trained here until a test of its own trains it."""
    from infoppo_cli.train.methods import methods

    assert set(TRAINED_ELSEWHERE) <= set(methods())
    for method, where in TRAINED_ELSEWHERE.items():
        assert _trains(where, method), f"{'::'.join(where)} does not train {method} and check its run"
    untrained = sorted(set(methods()) - set(TRAINED_ELSEWHERE))
    if not untrained:
        pytest.skip("every shipped method is trained end to end by the test TRAINED_ELSEWHERE names")
    for method in untrained:
        records = train(tmp_path / method, method, "--steps", "1", "--no-eval-before")
        assert [r["step"] for r in records] == [1], method
        number(records[0], "policy_loss")
        assert_the_planned_program_ran(method, records)


def test_two_data_parallel_workers_per_model(tmp_path):
    """``--gpus-per-node 2`` on a CPU run: two DeepSpeed workers per model, gradients all-reduced over
    gloo; the same optimizer steps per RL step (each worker takes half of every optimizer step's batch),
    and each worker saves its ZeRO partition of the optimizer state. DAPO-FT: its top-entropy token
    share is taken on each worker's own micro-batches."""
    records = train(tmp_path, "dapo-ft", "--steps", "2", "--no-eval-before", "--gpus-per-node", "2")
    assert [r["step"] for r in records] == [1, 2]
    assert_the_planned_program_ran("dapo-ft", records)
    step = tmp_path / "run" / "ckpt" / "_actor" / "global_step2"
    partitions = sorted(p.name for p in step.glob("*optim_states.pt"))
    assert partitions == [f"bf16_zero_pp_rank_{rank}_mp_rank_00_optim_states.pt" for rank in (0, 1)]


def test_the_long_horizon_preset_trains_and_records_both_clocks(tmp_path, chain_task):
    """``--preset tiny-cpu-long``: its plan names the task and the horizon, and every step records the
    discount of a response in both clocks, γ^Σρ >= γ^T (a response's ~200 tokens carry far less
    information than 200 tokens' worth)."""
    run = tmp_path / "run"
    done = run_infoppo(
        "train", "--preset", "tiny-cpu-long", "--output-dir", str(run), "--steps", "2", "--eval-every", "2",
        "--eval-samples", "1", "--gamma", "0.99", timeout=1500,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "task 'chain'" in done.stdout and "token time discounts them by γ^T = 0.99^" in done.stdout
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [0, 1, 2]
    assert 0.0 <= number(records[0], "eval_chain") <= 100.0
    for record in records[1:]:
        length = number(record, "response_length_mean")
        assert 100 <= length <= 256  # worked solutions, not 7-token answers
        token, info = number(record, "token_discount_mean"), number(record, "info_discount_mean")
        assert token <= 0.99**100 and info > token  # the two clocks part on long responses
        assert number(record, "optimizer_steps") == OPTIMIZER_STEPS_PER_RL_STEP * record["step"]
