"""Faults of a run's last eval, on the fault tests' watched run (``watched_run``: 2 RL steps, the eval
grid at 3, wandb on).

* With wandb on and ``--steps`` not a multiple of ``--eval-every``, the last eval ran after upstream's
  ``fit`` had closed wandb: ``You must call wandb.init() before wandb.log()``, no ``final/``, manifest
  "failed" (and ``report`` then showed the step-0 eval as the run's accuracy).
* A stop during the last step's eval lost that eval for good; ``--resume`` said "finished". A copy of
  the run has its last eval taken out of ``metrics.jsonl`` and its manifest set to "interrupted",
  which is what a stop during that eval leaves (the step's checkpoint is written before its eval):
  the resume must run the missing eval and nothing else, and leave a checkpoint a later resume can
  start from."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from cli_process import run_infoppo
from planned_run import assert_the_planned_program_ran
from watched_run import WATCHED_ARGS

from infoppo_cli.rundir import read_metrics

pytestmark = pytest.mark.slow


def test_a_run_whose_last_step_is_off_the_eval_grid_ends_with_its_eval_and_wandb_on(exposed_run, tmp_path):
    run = exposed_run.run
    assert exposed_run.returncode == 0, exposed_run.out[-3000:] + exposed_run.err[-3000:]
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"
    assert (run / "final").is_dir()
    records = read_metrics(run / "metrics.jsonl")
    evaluated = [r["step"] for r in records if "eval_arithmetic" in r]
    assert evaluated == [2]  # the last step, off the grid of 3 (no eval before step 1)
    assert "eval_arithmetic_reward_mean" in records[-1] and "eval_arithmetic_pass1" not in records[-1]
    assert list((run / "wandb").glob("offline-run-*")), "wandb logged nothing offline"
    report = run_infoppo(
        "report", str(run), "--out", str(tmp_path / "report"), "--format", "png", timeout=300
    )
    assert report.returncode == 0, report.stderr[-2000:]
    table = (tmp_path / "report" / "final_metrics.md").read_text()
    final = records[-1]["eval_arithmetic"]
    assert f"{float(final):.4g} |" in table
    assert "(step " not in table  # the run's accuracy is its last eval's, unmarked


def test_a_resume_runs_the_eval_a_stop_interrupted(exposed_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(exposed_run.run, run, ignore=shutil.ignore_patterns(".infoppo.lock", "wandb"))
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert any(k.startswith("eval_") for k in lines[-1])
    kept = [{k: v for k, v in line.items() if not k.startswith("eval_")} for line in lines]
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in kept))
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))

    args = ("train", "--preset", "tiny-cpu", *WATCHED_ARGS, "--no-eval-before", "--wandb-mode", "disabled")
    resumed = run_infoppo(*args, "--output-dir", str(run), "--resume", timeout=900)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2]
    assert 0.0 <= records[-1]["eval_arithmetic"] <= 100.0  # the missing eval ran
    assert records[-1]["optimizer_steps"] == 8  # and no step was trained again
    assert_the_planned_program_ran("info-clip", records)
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"
    # The eval saved the best checkpoint, which DeepSpeed now names ``latest``: with the loop's own
    # states, so that a later --resume (--steps 3) starts from it (it failed: no "episode").
    actor = run / "ckpt" / "_actor"
    saved = torch.load(
        actor / (actor / "latest").read_text().strip() / "mp_rank_00_model_states.pt",
        map_location="cpu",
        weights_only=False,
    )
    assert {"episode", "global_step", "data_loader_state_dict"} <= set(saved) and saved["global_step"] == 2
