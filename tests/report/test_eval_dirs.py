"""Eval output directories are named by the model they evaluated, and by its run's name, method and seed
when the model belongs to an ``infoppo train`` run."""

from __future__ import annotations

import json
from pathlib import Path

from infoppo_cli.report.eval_dirs import EvalIdentity, eval_identity


def trained_run(root: Path, name: str = "qwen3-4b-infoppo-seed42") -> Path:
    run = root / name
    (run / "final").mkdir(parents=True)
    (run / "ckpt" / "global_step20").mkdir(parents=True)
    manifest = {"config": {"method": "infoppo", "model": "Qwen/Qwen3-4B"}, "seed": 42}
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def document(model: str | None = None, **settings) -> dict:
    return {"benches": {}, "settings": {"model": model, **settings}}


def test_a_hub_model_is_named_by_its_id(tmp_path: Path) -> None:
    identity = eval_identity(tmp_path / "evals" / "Qwen--Qwen3-4B", document("Qwen/Qwen3-4B"))
    assert identity == EvalIdentity("Qwen/Qwen3-4B", model="Qwen/Qwen3-4B")


def test_a_trained_model_is_named_by_its_run_with_method_seed_and_base_model(tmp_path: Path) -> None:
    run = trained_run(tmp_path)
    expected = EvalIdentity("qwen3-4b-infoppo-seed42", model="Qwen/Qwen3-4B", method="infoppo", seed=42)
    assert eval_identity(tmp_path / "evals" / "x", document(str(run / "final"))) == expected
    assert eval_identity(run / "eval", {"benches": {}}) == expected  # RUN/eval, even without settings
    checkpoint = eval_identity(tmp_path / "evals" / "y", document(str(run / "ckpt" / "global_step20")))
    assert checkpoint.name == "qwen3-4b-infoppo-seed42 @global_step20" and checkpoint.method == "infoppo"


def test_older_metrics_without_settings_use_the_saved_eval_settings(tmp_path: Path) -> None:
    directory = tmp_path / "evals" / "old"
    directory.mkdir(parents=True)
    (directory / "eval_config.json").write_text(json.dumps({"settings": {"model": "org/model-7b"}}))
    assert eval_identity(directory, {"benches": {}}).name == "org/model-7b"


def test_a_local_model_outside_any_run_and_graded_responses_are_named_by_their_files(tmp_path: Path) -> None:
    (tmp_path / "merged" / "final").mkdir(parents=True)
    assert eval_identity(tmp_path / "e1", document(str(tmp_path / "merged" / "final"))).name == "merged"
    graded = eval_identity(tmp_path / "e2", document(None, responses=str(tmp_path / "r1-outputs.jsonl")))
    assert graded == EvalIdentity("responses r1-outputs")
    assert eval_identity(tmp_path / "e3", {"benches": {}}).name == "e3"
