"""Dry runs always plan: the whole plan first, then each problem a launch would be refused for as an
``error:`` line, exit 2; the same for ``train`` and for every point of a ``sweep``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inprocess import run_cli
from offline_hub import nothing_cached

from infoppo_cli.train.plan import TrainRequest, plan_training
from infoppo_cli.train.preflight import launch_problems

AIME24 = "error: cannot load aime24 (HuggingFaceH4/aime_2024): not in the local Hugging Face cache"
AIME25 = "error: cannot load aime25 (opencompass/AIME2025 [AIME2025-I]): not in the local Hugging Face cache"
MODEL = "error: model Qwen/Qwen3-14B-Base is not in the local Hugging Face cache, and the Hub cannot be used"


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh checkout offline: nothing cached, no data prepared, a wide terminal."""
    nothing_cached(monkeypatch, tmp_path / "cache")
    workspace = tmp_path / "checkout"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("COLUMNS", "300")
    return workspace


def test_a_train_dry_run_offline_with_nothing_cached_plans_then_lists_every_problem(
    offline, monkeypatch, capsys
):
    code, out, err = run_cli(monkeypatch, capsys, "train", "--preset", "qwen3-14b", "--dry-run")
    assert code == 2
    assert "infoppo train: qwen3-14b / infoppo" in out and "OpenRLHF invocation:" in out  # the whole plan
    assert "--actor.model_name_or_path Qwen/Qwen3-14B-Base" in out
    assert "does not exist yet: `infoppo data prep dapo-math-17k`" in out  # a note: a preview before prep
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert [line[:70] for line in errors] == [MODEL[:70], AIME24[:70], AIME25[:70]]
    assert all(len(line.split("error:")) == 2 for line in errors)  # one problem per line


def test_a_sweep_dry_run_applies_the_same_checks_to_every_point(offline, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "sweep", "gamma", "--preset", "qwen3-14b", "--dry-run")
    assert code == 2  # as `train --dry-run` of the same preset
    assert (
        "gamma sweep, preset qwen3-14b: 8 runs" in out and out.count("infoppo train --preset qwen3-14b") == 8
    )
    assert "tracking: wandb project infoppo, group gamma-qwen3-14b" in out
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert [line[:70] for line in errors] == [MODEL[:70], AIME24[:70], AIME25[:70]]  # each once, for all 8
    assert not (offline / "sweeps").exists()


def test_a_problem_of_some_points_names_them(offline, monkeypatch, capsys):
    rows = "".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(64))
    (offline / "prompts.jsonl").write_text(rows)
    taken = offline / "sweeps" / "gamma-qwen3-4b" / "gamma-0.99-token-seed1"
    taken.mkdir(parents=True)
    (taken / "manifest.json").write_text(json.dumps({"config": {}, "status": "finished"}))
    code, out, err = run_cli(
        monkeypatch, capsys, "sweep", "gamma", "--values", "0.99", "--data", "prompts.jsonl", "--dry-run"
    )
    assert code == 2, err
    assert "error: gamma-0.99-token-seed1: cannot resume:" in " ".join(err.split())


def test_a_real_sweep_is_refused_with_the_same_lines_before_anything_is_made(offline, monkeypatch, capsys):
    rows = "".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(64))
    (offline / "prompts.jsonl").write_text(rows)
    code, out, err = run_cli(
        monkeypatch, capsys, "sweep", "gamma", "--values", "0.99", "--data", "prompts.jsonl"
    )
    assert code == 2 and err.startswith(MODEL.replace("14B", "4B")[:60]) and "Running" not in out
    assert not (offline / "sweeps" / "gamma-qwen3-4b" / "sweep.json").exists()


def test_launch_problems_are_each_found_not_only_the_first(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(64)))
    (tmp_path / "a.jsonl").write_text(json.dumps({"colour": "red"}) + "\n")  # no problem, no answer
    (tmp_path / "b.jsonl").write_text(json.dumps({"problem": "1+1?", "answer": ""}) + "\n")
    request = TrainRequest(
        preset="qwen3-4b",
        data=str(data),
        output_dir=str(tmp_path / "none"),
        resume=True,
        eval_bench=f"aime24={tmp_path / 'a.jsonl'},mine={tmp_path / 'b.jsonl'}",
    )
    problems = launch_problems(plan_training(request, strict_data=False))
    assert problems[0].startswith("nothing to resume")
    assert len(problems) == 3 and "a.jsonl" in problems[1] and "b.jsonl" in problems[2]
