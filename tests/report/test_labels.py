"""Legends name runs outside a sweep by their given name, or by method and the settings that tell them
apart, never by the directory they sit in."""

from __future__ import annotations

import json
from pathlib import Path

from report_runs import write_run

from infoppo_cli.report.core import make_report
from infoppo_cli.report.curves import build_curves
from infoppo_cli.report.labels import label_runs
from infoppo_cli.report.runs import read_inputs


def trained_run(
    path: Path, method: str, gamma: float, lambd: float, seed: int = 42, run_name: str | None = None,
    model: str = "Qwen/Qwen3-4B-Base",
) -> Path:  # fmt: skip
    """A run directory whose manifest records its method, settings and (maybe) the name it was given."""
    write_run(path, gamma, "info" if method == "infoppo" else "token", seed, {"aime24": 30.0 + gamma})
    flags = {"algo.advantage.gamma": gamma, "algo.advantage.lambd": lambd, "actor.adam.lr": 1e-6}
    config = {"method": method, "model": model, "openrlhf_flags": flags, "request": {"run_name": run_name}}
    (path / "manifest.json").write_text(json.dumps({"config": config, "seed": seed}))
    return path


def labels_of(*dirs: Path) -> dict[str, str]:
    runs = read_inputs(list(dirs)).runs
    label_runs(runs)
    return {run.path.name: run.label for run in runs}


def test_runs_are_labelled_by_method_and_the_settings_that_differ(tmp_path: Path) -> None:
    trained_run(tmp_path / "runs" / "qwen3-4b-infoppo-seed42", "infoppo", 0.999, 0.99)
    trained_run(tmp_path / "runs" / "qwen3-4b-ppo-seed42", "ppo", 1.0, 1.0)
    labels = labels_of(tmp_path / "runs")
    assert labels == {
        "qwen3-4b-infoppo-seed42": "infoppo γ=0.999 λ=0.99",
        "qwen3-4b-ppo-seed42": "ppo γ=1 λ=1",
    }


def test_a_given_run_name_wins_and_equal_labels_are_told_apart_by_seed_then_model(tmp_path: Path) -> None:
    trained_run(tmp_path / "runs" / "a", "infoppo", 0.999, 0.99, seed=1)
    trained_run(tmp_path / "runs" / "b", "infoppo", 0.999, 0.99, seed=2)
    trained_run(tmp_path / "runs" / "c", "infoppo", 0.999, 0.99, seed=2, run_name="long-horizon try")
    trained_run(tmp_path / "runs" / "d", "infoppo", 0.999, 0.99, seed=2, model="Qwen/Qwen3-8B-Base")
    labels = labels_of(tmp_path / "runs")
    assert labels["c"] == "long-horizon try"
    assert labels["a"] == "infoppo (Qwen3-4B-Base) seed 1"
    assert labels["b"] == "infoppo (Qwen3-4B-Base) seed 2"
    assert labels["d"] == "infoppo (Qwen3-8B-Base)"
    assert len(set(labels.values())) == 4


def test_the_legends_of_a_report_show_labels_not_directories(tmp_path: Path) -> None:
    trained_run(tmp_path / "runs" / "qwen3-4b-infoppo-seed42", "infoppo", 0.999, 0.99)
    trained_run(tmp_path / "runs" / "qwen3-4b-ppo-seed42", "ppo", 1.0, 1.0)
    report = make_report([tmp_path / "runs"], tmp_path / "report", formats=("svg",))
    svg = (report.out_dir / "accuracy.svg").read_text() + (report.out_dir / "mean_at_k.svg").read_text()
    assert svg.count("infoppo γ=0.999 λ=0.99") == 2 and "qwen3-4b-infoppo-seed42" not in svg
    runs = read_inputs([tmp_path / "runs"]).runs
    label_runs(runs)
    assert {curve.label for curve in build_curves(runs, "reward_mean")} == {
        "infoppo γ=0.999 λ=0.99",
        "ppo γ=1 λ=1",
    }
