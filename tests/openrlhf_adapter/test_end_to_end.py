"""``infoppo train --preset tiny-cpu`` end to end, as a user runs it, on this machine's CPU.

The real entry point in a child process: the plan, the launch, OpenRLHF's ``train()`` and trainer,
its sample generator and dynamic filtering, OpenRLHF's vLLM engine on vLLM's CPU build (which grades
with infoppo's reward and receives the actor's weights every step), infoppo's experience maker, the actor
and critic workers training with OpenRLHF's DeepSpeed strategy on DeepSpeed's CPU accelerator (one worker per
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
import re
from pathlib import Path

import pytest
import torch
from cli_process import run_infoppo
from planned_run import (
    OPTIMIZER_STEPS_PER_RL_STEP,
    assert_every_step_recorded,
    assert_the_planned_program_ran,
    number,
)
from safetensors.torch import load_file

from infoppo_cli.openrlhf_adapter.progress import MARKER
from infoppo_cli.rundir import read_metrics

pytestmark = pytest.mark.slow

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


def test_a_tiny_run_trains_evaluates_checkpoints_and_resumes(tmp_path, cached_task):
    """DAPO (dynamic filtering, its signed reward, no critic); InfoPPO and PPO are trained end to end
    by the README's quickstart, with the same checks of every step (``assert_every_step_recorded``)."""
    method = "dapo"
    records = train(tmp_path, method, "--set", "ckpt.max_num=1")
    assert [r["step"] for r in records] == [0, 1, 2]  # the base model's eval, then exactly 2 RL steps
    assert_the_planned_program_ran(method, records)
    assert_the_weights_moved(tmp_path / "run", cached_task.model_dir)
    assert set(records[0]) == {"step"} | {k for k in records[0] if k.startswith("eval_")}
    assert all("eval_arithmetic" in record for record in records)  # Mean@2 on the held-out problems
    assert_every_step_recorded(method, records)

    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["config"]["infotime"]["rl_steps"] == 2
    assert (run / "final" / "model.safetensors").is_file()
    actor_ckpt = run / "ckpt" / "_actor"
    regular = sorted(p.name for p in actor_ckpt.iterdir() if p.name.startswith("global_step"))
    assert regular == ["global_step2"]  # ckpt.max_num=1: step 1's was rotated out
    assert (actor_ckpt / "global_step2" / "mp_rank_00_model_states.pt").is_file()  # DeepSpeed's layout
    assert (actor_ckpt / "zero_to_fp32.py").is_file()

    # As a stop during step 2's eval leaves it (the checkpoint is saved before the eval): no eval of 2.
    # The resume evaluates step 2 first, from step 2's weights (the CPU trainer checks the engines hold
    # the actor's; before any sync they held the base model's, and that eval was recorded as step 2's).
    log = run / "metrics.jsonl"
    lines = [_without_the_eval_of(2, json.loads(line)) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines if len(line) > 1))
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    resumed = train(tmp_path, method, "--set", "ckpt.max_num=1", "--resume", "--steps", "3")
    assert [r["step"] for r in resumed] == [0, 1, 2, 3]  # continued from step 2's checkpoint to 3
    assert "eval_arithmetic" in resumed[2]  # evaluated again, from the trained weights
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert {"step": 2, "resumed_at_step": 2} in lines  # what an earlier attempt wrote after 2 is dropped
    assert number(resumed[-1], "optimizer_steps") == 3 * OPTIMIZER_STEPS_PER_RL_STEP  # the engine's own count
    assert number(resumed[-1], "eval_arithmetic") >= 0.0

    again = run_infoppo("train", "--replay", str(run), "--output-dir", str(tmp_path / "again"), "--dry-run")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "rl_steps = 3" in again.stdout and 'device = "cpu"' in again.stdout


def _without_the_eval_of(step: int, line: dict) -> dict:
    return {
        key: value for key, value in line.items() if line.get("step") != step or not key.startswith("eval_")
    }


# Where each shipped method is trained end to end (each run costs about 45 s of Ray, vLLM and
# DeepSpeed start-up on 2 cores, so the runs are few and each is checked for several things).
TRAINED_ELSEWHERE = {
    "infoppo": ("test_readme.py", "test_the_quickstart_works_on_this_machine"),
    "ppo": ("test_readme.py", "test_the_quickstart_works_on_this_machine"),
    "dapo": (
        "openrlhf_adapter/test_end_to_end.py",
        "test_a_tiny_run_trains_evaluates_checkpoints_and_resumes",
    ),
    "dapo-ft": (
        "openrlhf_adapter/test_end_to_end.py",
        "test_two_data_parallel_workers_per_model_and_a_quiet_terminal",
    ),
    "info-gae": (
        "faults/test_full_disk.py",
        "test_a_full_disk_stops_the_run_in_one_line_with_its_manifest_failed_and_no_partial_checkpoint",
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


def test_every_method_is_trained_end_to_end_by_a_named_test():
    """A method added to methods.toml fails here until a test trains it on the CPU and checks its run
    against its plan, and is named in ``TRAINED_ELSEWHERE``."""
    from infoppo_cli.train.methods import methods

    untrained = sorted(set(methods()) - set(TRAINED_ELSEWHERE))
    assert not untrained, f"train {untrained} end to end in a test and name it in TRAINED_ELSEWHERE"
    assert set(TRAINED_ELSEWHERE) <= set(methods())
    for method, where in TRAINED_ELSEWHERE.items():
        assert _trains(where, method), f"{'::'.join(where)} does not train {method} and check its run"


def test_two_data_parallel_workers_per_model_and_a_quiet_terminal(tmp_path):
    """``--gpus-per-node 2`` on a CPU run: two DeepSpeed workers per model, gradients all-reduced over
    gloo; the same optimizer steps per RL step (each worker takes half of every optimizer step's batch),
    and each worker saves its ZeRO partition of the optimizer state. DAPO-FT: its top-entropy token
    share is taken on each worker's own micro-batches.

    The terminal of this 3-step run shows each step and the eval, and nothing of Ray's, DeepSpeed's
    or OpenRLHF's output, which all goes to ``train.log``."""
    run = tmp_path / "run"
    args = ["train", "--preset", "tiny-cpu", "--method", "dapo-ft", "--gpus-per-node", "2"]
    args += ["--steps", "3", "--eval-every", "3", "--eval-samples", "2", "--no-eval-before"]
    args += ["--set", "train.micro_batch_size=16", "--set", "rollout.micro_batch_size=64"]  # half each
    done = run_infoppo(*args, "--set", "ckpt.save_steps=1", "--output-dir", str(run), timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2, 3]
    assert_the_planned_program_ran("dapo-ft", records)
    step = run / "ckpt" / "_actor" / "global_step3"
    partitions = sorted(p.name for p in step.glob("*optim_states.pt"))
    assert partitions == [f"bf16_zero_pp_rank_{rank}_mp_rank_00_optim_states.pt" for rank in (0, 1)]

    shown = (done.stdout + done.stderr).splitlines()
    assert len(shown) <= 150, len(shown)
    for number_ in (1, 2, 3):
        line = next(line for line in shown if line.startswith(f"step {number_}/3  "))
        assert re.search(r"reward -?\d\.\d{3} .* response \d+\.\d tokens  took \S+", line), line
    assert re.search(r"^step 1/3 .* left ~\S+$", "\n".join(shown), re.M)  # steps and an eval to go
    assert any(line.startswith("eval at step 3: arithmetic ") for line in shown)
    assert not any("zero_stage" in line or "Episode [" in line for line in shown)
    log = (run / "train.log").read_text()
    assert "namespace(" in log and "Started a local Ray instance" in log  # upstream's driver output
    assert "(CpuInfoPPOTrainer pid=" in log and "(CpuPolicyModelActor pid=" in log  # Ray's workers'
    assert "step 3/3  " in log and "eval at step 3: " in log and "(exit code 0)" in log
    assert MARKER not in log and "\x1b[" not in log


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
