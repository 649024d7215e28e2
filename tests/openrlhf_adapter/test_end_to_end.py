"""``infoppo train``'s plan run through OpenRLHF's real trainer on CPU, prompts to ``metrics.jsonl``.

Sample generator -> rollout actor and infoppo's reward -> experience maker -> Ray pickling -> replay
buffer -> ``ppo_train``/``training_step`` (actor and critic workers) -> in-training evaluation ->
``metrics.jsonl``; see ``tests/support/cpu_training.py`` for the stand-ins (vLLM's generation, and
the CUDA-only DeepSpeed engine calls).
"""

from __future__ import annotations

import json

import pytest
from cpu_training import (
    add_probe_metrics,
    build_trainer,
    run_args,
    start_generation_stand_in,
    tiny_overrides,
)
from tiny_model import build_tiny_model

from infoppo_cli.rundir import read_metrics

PROBLEMS = {"What is 2 + 3?": "5", "What is 4 + 4?": "8", "What is 7 - 1?": "6"}  # + HOPELESS: 2 steps of 2
HOPELESS = "What is the 10th prime?"  # the stand-in never answers it: DAPO's filter drops its group
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
}


def missing_metrics(record: dict, expected: set[str]) -> set[str]:
    """The expected metrics a metrics.jsonl record lacks (a type that upstream drops shows up here)."""
    return {name for name in expected if not isinstance(record.get(name), float)}


def hf_copies(plan) -> tuple[list[str], int]:
    """The per-step HF copies left in the run's ``ckpt/``, and how many best-metric copies."""
    names = sorted(path.name for path in (plan.output_dir / "ckpt").glob("*_hf"))
    return [n for n in names if n.startswith("global_step")], sum(n.startswith("best_") for n in names)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen3"))


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _plan(tmp_path, model_dir, method, *overrides, resume=False):
    """``infoppo train``'s plan for a tiny run: AIME24 (a local two-problem copy) evaluated every step."""
    from infoppo_cli.train.plan import TrainRequest, plan_training

    rows = [{"prompt": p, "label": a} for p, a in PROBLEMS.items()]
    data = _write_jsonl(tmp_path / "train.jsonl", [{"prompt": HOPELESS, "label": "29"}, *rows])
    bench = [{"problem": p, "answer": a} for p, a in list(PROBLEMS.items())[:2]]
    bench_file = _write_jsonl(tmp_path / "aime24-copy.jsonl", bench)
    request = TrainRequest(
        "qwen3-4b", method, model=str(model_dir), data=str(data), output_dir=str(tmp_path / "run")
    )
    request.nodes, request.gpus_per_node, request.resume = 1, 1, resume
    request.eval_bench, request.eval_every, request.eval_samples = f"aime24={bench_file}", 1, 2
    request.overrides = [*tiny_overrides(), *overrides]
    return plan_training(request)


def _train(local_ray, plan) -> None:
    """What ``infoppo train`` launches, on CPU: the eval set written, OpenRLHF's trainer fitted."""
    from infoppo_cli.train.run import write_eval_set

    write_eval_set(plan)
    args = run_args(plan.command()[3:])
    model_dir = args.actor.model_name_or_path
    engine = start_generation_stand_in(local_ray, model_dir, args.reward.remote_url[0], dict(PROBLEMS))
    trainer = build_trainer(args, model_dir, [engine])
    handles = trainer.actor_model_group._actor_handlers
    local_ray.get([h.__ray_call__.remote(add_probe_metrics) for h in handles])
    try:
        trainer.fit()
    finally:
        for group in (trainer.actor_model_group, trainer.critic_model_group):
            for handle in group._actor_handlers if group else []:
                local_ray.kill(handle)
        local_ray.kill(engine)


@pytest.mark.parametrize("method", ["infoppo", "dapo"])
def test_a_planned_run_trains_and_logs_every_metric(method, local_ray, model_dir, tmp_path):
    # DAPO's overlong shaping scaled to 24 new tokens; a checkpoint each step, at most one kept
    extra = ["reward.overlong_buffer_len=8", "ckpt.save_steps=1", "ckpt.max_num=1", "ckpt.save_hf=true"]
    plan = _plan(tmp_path, model_dir, method, *(extra if method == "dapo" else []))
    _train(local_ray, plan)

    records = read_metrics(plan.output_dir / "metrics.jsonl")
    assert records and [r["step"] for r in records] == list(range(1, len(records) + 1))
    expected = EVERY_METHOD | ({"critic_loss", "info_discount_mean"} if method == "infoppo" else set())
    for record in records:
        assert missing_metrics(record, expected) == set(), record
        assert 0.0 <= record["eval_aime24"] <= 100.0  # Mean@2 in percent, every step (eval.steps=1)
        assert record["clip_lower_mean"] <= 1.0 <= record["clip_upper_mean"]
        assert record["entropy_mean"] > 0 and 0 < record["rho_mean"] <= 1
        # upstream's aggregation keeps a tensor in `info` and silently drops a Python float:
        assert record["probe_tensor"] == pytest.approx(0.5)
        assert missing_metrics(record, {"probe_float"}) == {"probe_float"}
    if method == "dapo":  # the hopeless group was generated, graded, and filtered out
        assert any(r["kept_group_frac"] < 1.0 for r in records)
        assert any(r["reward_mean"] < r["reward_mean_kept"] for r in records)
    else:
        assert all(r["kept_group_frac"] == 1.0 for r in records)

    if method == "dapo":  # rotation: one DeepSpeed checkpoint and one HF copy, the last step's
        assert hf_copies(plan) == ([f"global_step{records[-1]['step']}_hf"], 1)
        resumed = _plan(tmp_path, model_dir, method, *extra, "train.num_episodes=2", resume=True)
        _train(local_ray, resumed)
        steps = [r["step"] for r in read_metrics(plan.output_dir / "metrics.jsonl")]
        assert steps[len(records)] == len(records) + 1 and steps == list(
            range(1, len(steps) + 1)
        )  # continued
        assert hf_copies(plan) == ([f"global_step{steps[-1]}_hf"], 1)
