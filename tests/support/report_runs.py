"""Synthetic run and sweep directories for report tests: metrics whose values are simple functions of a
run's settings, so a test can compute every expected number."""

from __future__ import annotations

import json
from pathlib import Path

from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.state import open_sweep

STEPS = (1, 2, 3, 4)


def step_row(step: int, gamma: float, arm: str, seed: int) -> dict:
    """A metrics.jsonl line whose values are simple functions of the run's settings."""
    row = {
        "step": step,
        "reward_mean": 0.1 * step + seed / 100,
        "response_length_mean": 1000.0 + 100 * step * gamma,
        "entropy_mean": 0.5 / step,
        "clip_upper_mean": 1.28 if arm == "token" else 1.0 + 0.3 * gamma,
        "clip_lower_mean": 0.8 if arm == "token" else 0.9,
        "policy_loss": -0.01 * step,
        "critic_loss": 0.5,
        "token_discount_mean": gamma ** (1000.0 + 100 * step * gamma),
        "timing/generation": 2.0 + seed / 10,
        "timing/ppo_train": 3.0,
        "timing/step_total": 5.5 + seed / 10,
    }
    if arm == "info":
        row |= {"rho_mean": 0.4 + 0.01 * step, "info_discount_mean": gamma ** (200 * step)}
    if step % 2 == 0:
        row |= {"eval_aime24": 10.0 * step + seed, "eval_aime25": 5.0 * step + seed}
        # OpenRLHF's own eval keys, which the trainer's metrics.jsonl carries as well
        row |= {"eval_aime24_pass1": (10.0 * step + seed) / 100, "eval_aime24_pass16": 0.5}
        row |= {"eval_aime24_truncated_rate": 0.1, "eval_num_samples": 480.0, "eval_truncated_rate": 0.1}
    return row


def write_run(
    run_dir: Path, gamma: float, arm: str, seed: int, eval_scores: dict | None = None, method: str = ""
) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    method = method or ("infoppo" if arm == "info" else "ppo")
    (run_dir / "manifest.json").write_text(json.dumps({"config": {"method": method}, "seed": seed}))
    lines = [json.dumps(step_row(step, gamma, arm, seed)) for step in STEPS]
    (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    if eval_scores is not None:
        benches = {bench: {"mean@k": score, "k": 16} for bench, score in eval_scores.items()}
        (run_dir / "eval").mkdir()
        (run_dir / "eval" / "metrics.json").write_text(json.dumps({"benches": benches, "average": {}}))


def finished_sweep(
    out_dir: Path, kind: str, seeds: int, values: list[str] | None = None, skip: str = ""
) -> Path:
    """A sweep whose runs all finished; the run named ``skip`` has no final eval."""
    plan = build_plan(kind, preset="qwen3-4b", out_dir=out_dir, values=values, seeds=seeds)
    state, _ = open_sweep(plan, command=[], settings={})
    for run in state.runs:
        gamma = float(run.parameters.get("gamma", 0.999))
        arm_bonus = {"info": 3.0, "token": 0.0}.get(run.time, 1.5 * len(run.time) % 4)
        scores = None if run.name == skip else {"aime24": 30 + gamma + run.seed + arm_bonus}
        info_time = run.time not in ("token", "ppo", "info-clip")
        write_run(Path(run.output_dir), gamma, "info" if info_time else "token", run.seed, scores, run.method)
        run.phases[0].status = "done"
        run.refresh_status()
    state.save()
    return plan.out_dir
