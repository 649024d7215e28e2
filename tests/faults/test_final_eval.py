"""Fault: a stop during the last step's eval lost that eval for good; ``--resume`` said "finished".

A real 2-step CPU run; its last eval is then taken out of ``metrics.jsonl`` and the manifest set to
"interrupted", which is what a stop during that eval leaves (the step's checkpoint is written before
its eval). The resume must run the missing eval and nothing else."""

from __future__ import annotations

import json

import pytest
from cli_process import run_infoppo
from planned_run import assert_the_planned_program_ran

from infoppo_cli.rundir import read_metrics

pytestmark = pytest.mark.slow


def test_a_resume_runs_the_eval_a_stop_interrupted(tmp_path, task_cache):
    run = tmp_path / "run"
    args = (
        "train",
        "--preset",
        "tiny-cpu",
        "--method",
        "ppo",
        "--steps",
        "2",
        "--eval-every",
        "2",
        "--eval-samples",
        "2",
        "--no-eval-before",
        "--output-dir",
        str(run),
    )
    first = run_infoppo(*args, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert any(k.startswith("eval_") for k in lines[-1])
    kept = [{k: v for k, v in line.items() if not k.startswith("eval_")} for line in lines]
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in kept))
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))

    resumed = run_infoppo(*args, "--resume", timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2]
    assert 0.0 <= records[-1]["eval_arithmetic"] <= 100.0  # the missing eval ran
    assert records[-1]["optimizer_steps"] == 8  # and no step was trained again
    assert_the_planned_program_ran("ppo", records)
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"


def test_a_run_whose_last_step_is_off_the_eval_grid_ends_with_its_eval_and_wandb_on(
    tmp_path, task_cache, monkeypatch
):
    """Fault: with wandb on and ``--steps`` not a multiple of ``--eval-every``, the last eval ran after
    upstream's ``fit`` had closed wandb: ``You must call wandb.init() before wandb.log()``, no
    ``final/``, manifest "failed" (and ``report`` then showed the step-0 eval as the run's accuracy)."""
    monkeypatch.setenv("WANDB_API_KEY", "planted-not-a-real-key")
    run = tmp_path / "run"
    args = ("train", "--preset", "tiny-cpu", "--steps", "2", "--eval-samples", "2", "--output-dir", str(run))
    done = run_infoppo(*args, "--wandb-mode", "offline", timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"
    assert (run / "final").is_dir()
    records = read_metrics(run / "metrics.jsonl")
    evaluated = [r["step"] for r in records if "eval_arithmetic" in r]
    assert evaluated == [0, 2]  # the base model, and the last step off the grid of 10
    assert "eval_arithmetic_reward_mean" in records[-1] and "eval_arithmetic_pass1" not in records[-1]
    offline_runs = list((run / "wandb").glob("offline-run-*"))
    assert offline_runs, "wandb logged nothing offline"
    report = run_infoppo(
        "report", str(run), "--out", str(tmp_path / "report"), "--format", "png", timeout=300
    )
    assert report.returncode == 0, report.stderr[-2000:]
    table = (tmp_path / "report" / "final_metrics.md").read_text()
    final = records[-1]["eval_arithmetic"]
    assert f"| {float(final):.4g} |" in table or f"{float(final):.4g} |" in table
    assert "(step 0" not in table  # the run's accuracy is its last eval's, unmarked
