"""The run directory: names, manifest, metrics.jsonl reader, and where a model's run is."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import (
    RunDir,
    read_manifest,
    read_metrics_log,
    run_of_model,
    trained_response_length,
    write_manifest,
    write_model_card,
)


def test_default_layout():
    run = RunDir.default("qwen3-4b", "infoppo", 3)
    assert run.path.as_posix() == "runs/qwen3-4b-infoppo-seed3"
    assert [p.name for p in (run.manifest, run.metrics, run.final, run.ckpt, run.eval)] == [
        "manifest.json",
        "metrics.jsonl",
        "final",
        "ckpt",
        "eval",
    ]
    assert run.model_card.as_posix().endswith("final/README.md")


def test_a_model_belongs_to_the_run_whose_manifest_is_above_it(tmp_path):
    run = RunDir(tmp_path / "run")
    (run.ckpt / "global_step5_hf").mkdir(parents=True)
    run.final.mkdir()
    assert run_of_model(run.final) is None  # no manifest yet: not a run
    write_manifest(run, {"config": {"openrlhf_flags": {"rollout.max_new_tokens": 8192}}})
    assert run_of_model(run.final).path == run.path.resolve()
    assert run_of_model(run.ckpt / "global_step5_hf").path == run.path.resolve()
    assert run_of_model("Qwen/Qwen3-4B-Base") is None
    assert trained_response_length(run.final) == 8192
    assert read_manifest(run)["config"]["openrlhf_flags"]["rollout.max_new_tokens"] == 8192


def test_an_unreadable_manifest_is_one_usage_error(tmp_path):
    run = RunDir(tmp_path)
    run.manifest.write_text("{torn")
    with pytest.raises(UsageError, match="manifest.json is unreadable"):
        read_manifest(run)
    assert read_manifest(tmp_path / "elsewhere") is None


def test_metrics_reader_merges_repeated_steps_and_says_what_it_skipped(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(
        '{"step": 2, "reward_mean": 0.2}\n'
        '{"reward_mean": 0.9}\n'  # no step: its line number (2) stands in
        '{"step": 2, "rho_mean": 0.5}\n'
        "[1, 2]\n"
        '{"step": 1, "reward_mean": 0.1}\n'
        '{"step": 3, "rew'
    )
    log = read_metrics_log(path)
    assert log.records == [
        {"step": 1, "reward_mean": 0.1},
        {"step": 2, "reward_mean": 0.9, "rho_mean": 0.5},
    ]
    assert (log.malformed_lines, log.stepless_lines) == ([4, 6], [2])


@given(st.lists(st.tuples(st.integers(1, 5), st.floats(-1, 1)), max_size=20))
def test_later_lines_win_for_any_order_of_steps(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("m") / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s, "x": x}) + "\n" for s, x in lines))
    expected = {}
    for step, x in lines:
        expected[step] = x
    assert read_metrics_log(path).records == [{"step": s, "x": expected[s]} for s in sorted(expected)]


def test_model_card_before_evaluation_says_how_to_fill_it(tmp_path):
    run = RunDir(tmp_path / "qwen3-4b-ppo-seed1")
    assert write_model_card(run) is None  # no manifest: nothing to describe
    run.final.mkdir(parents=True)
    manifest = {"config": {"method": "ppo", "preset": "qwen3-4b", "model": "Qwen/Qwen3-4B-Base"}}
    write_manifest(run, {**manifest, "command": ["python", "-m", "openrlhf.cli.train_ppo_ray"], "seed": 1})
    text = write_model_card(run).read_text()
    assert text.startswith('---\nbase_model: "Qwen/Qwen3-4B-Base"\n')
    assert "model-index" not in text and "Not evaluated yet" in text
    assert "# qwen3-4b-ppo-seed1" in text and "python -m openrlhf.cli.train_ppo_ray" in text


def test_a_finished_training_run_gets_its_model_card(tmp_path, monkeypatch):
    import shlex
    import sys

    from infoppo_cli.train.plan import TrainPlan, TrainRequest, plan_training
    from infoppo_cli.train.run import run_training

    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "label": "1"}\n')
    request = TrainRequest(
        preset="qwen3-4b", data=str(data), output_dir=str(tmp_path / "run"), eval_bench="none"
    )
    plan = plan_training(request)
    final = tmp_path / "run" / "final"
    monkeypatch.setattr("infoppo_cli.train.run.require_gpu", lambda plan: None)
    script = f"import os; os.makedirs({str(final)!r})"  # what OpenRLHF's save at the end leaves
    monkeypatch.setattr(TrainPlan, "command", lambda self: [sys.executable, "-c", script])
    assert run_training(plan) == 0
    card = (final / "README.md").read_text()
    assert card.startswith("---\nbase_model: ") and "Not evaluated yet" in card
    assert f"**{plan.method.name}**" in card and shlex.quote(script) in card
