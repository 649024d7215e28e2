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
