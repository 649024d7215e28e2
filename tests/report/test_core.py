"""Reports from synthetic run, eval and sweep directories: PNG figures, the final-metrics table, notes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_process import run_infoppo
from PIL import Image

from infoppo_cli.errors import UsageError
from infoppo_cli.report.core import (
    CURVE_FIGURES,
    DPI,
    PANEL_INCHES,
    RunData,
    build_curves,
    make_report,
    read_inputs,
)
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
    }
    if arm == "info":
        row |= {"rho_mean": 0.4 + 0.01 * step, "info_discount_mean": gamma**step}
    if step % 2 == 0:
        row |= {"eval_aime24": 10.0 * step + seed, "eval_aime25": 5.0 * step + seed}
        # OpenRLHF's own eval keys, which the lead's metrics.jsonl carries as well
        row |= {"eval_aime24_pass1": (10.0 * step + seed) / 100, "eval_aime24_pass16": 0.5}
        row |= {"eval_aime24_truncated_rate": 0.1, "eval_num_samples": 480.0, "eval_truncated_rate": 0.1}
    return row


def write_run(run_dir: Path, gamma: float, arm: str, seed: int, eval_scores: dict | None = None) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    method = "infoppo" if arm == "info" else "ppo"
    (run_dir / "manifest.json").write_text(json.dumps({"config": {"method": method}, "seed": seed}))
    lines = [json.dumps(step_row(step, gamma, arm, seed)) for step in STEPS]
    (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    if eval_scores is not None:
        benches = {bench: {"mean@k": score, "k": 16} for bench, score in eval_scores.items()}
        (run_dir / "eval").mkdir()
        (run_dir / "eval" / "metrics.json").write_text(json.dumps({"benches": benches, "average": {}}))


@pytest.fixture
def gamma_sweep(tmp_path: Path) -> Path:
    """A two-value, two-arm, two-seed gamma sweep whose runs all finished (one eval missing)."""
    plan = build_plan("gamma", preset="qwen3-4b", out_dir=tmp_path / "gamma", values=["0.999,0.99"], seeds=2)
    state, _ = open_sweep(plan, command=[], settings={})
    for run in state.runs:
        gamma = run.parameters["gamma"]
        scores = None if run.name == "gamma-0.99-token-seed2" else {"aime24": 30 + gamma + run.seed}
        write_run(Path(run.output_dir), gamma, run.time, run.seed, scores)
        run.phases[0].status = "done"
        run.refresh_status()
    state.save()
    return plan.out_dir


def png_size_and_ink(path: Path) -> tuple[tuple[int, int], float]:
    image = np.asarray(Image.open(path).convert("L"), dtype=float)
    return (image.shape[1], image.shape[0]), float((image < 250).mean())


def expected_size(panels: int) -> tuple[int, int]:
    return round(PANEL_INCHES[0] * panels * DPI), round(PANEL_INCHES[1] * DPI)


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="") as handle:
        return {row["run"]: row for row in csv.DictReader(handle)}


def test_sweep_report_draws_every_figure_at_the_right_size(gamma_sweep: Path, tmp_path: Path) -> None:
    report = make_report([gamma_sweep], tmp_path / "report")
    names = sorted(path.name for path in report.figures)
    assert names == sorted(
        ["accuracy.png", *(figure.file for figure in CURVE_FIGURES), "final_accuracy_gamma.png"]
    )
    panels = {figure.file: len(figure.panels) for figure in CURVE_FIGURES}
    panels |= {"accuracy.png": 2, "final_accuracy_gamma.png": 2}  # aime24 and aime25
    for path in report.figures:
        size, ink = png_size_and_ink(path)
        assert size == expected_size(panels[path.name]), path.name
        assert 0.01 < ink < 0.9, f"{path.name} looks empty or black ({ink:.3f})"


def test_table_holds_the_last_logged_values_and_final_accuracies(gamma_sweep: Path, tmp_path: Path) -> None:
    report = make_report([gamma_sweep], tmp_path / "report")
    rows = read_csv(report.table_csv)
    assert len(rows) == 8
    info = rows["gamma-0.999-info-seed2"]
    last = step_row(STEPS[-1], 0.999, "info", 2)
    assert info["sweep"] == "gamma" and info["value"] == "0.999" and info["arm"] == "info"
    assert info["seed"] == "2" and info["status"] == "done" and info["steps"] == "4"
    for column, key in [("reward", "reward_mean"), ("length", "response_length_mean"), ("rho", "rho_mean")]:
        assert float(info[column]) == last[key]
    assert float(info["Gamma_info"]) == 0.999**4
    assert float(info["aime24"]) == 30 + 0.999 + 2  # the final eval's mean@k wins over training evals
    assert float(info["aime25"]) == last["eval_aime25"]  # only measured during training
    assert info["accuracy_from"] == "eval+training"
    token = rows["gamma-0.99-token-seed2"]
    assert token["rho"] == "" and token["Gamma_info"] == ""  # token time logs no rho
    assert float(token["aime24"]) == 10.0 * 4 + 2 and token["accuracy_from"] == "training"
    markdown = report.table_md.read_text()
    assert markdown.splitlines()[0].startswith("| run | sweep | value | arm | seed | status | steps | reward")
    assert "| gamma-0.999-info-seed2 | gamma | 0.999 | info | 2 | done | 4 | 0.42 |" in markdown


def test_seeds_of_a_grid_point_are_averaged_and_arms_are_told_apart(gamma_sweep: Path) -> None:
    runs = read_inputs([gamma_sweep]).runs
    curves = {curve.label: curve for curve in build_curves(runs, "reward_mean")}
    assert set(curves) == {f"γ={g} {arm} (2 seeds)" for g in ("0.999", "0.99") for arm in ("info", "token")}
    curve = curves["γ=0.999 info (2 seeds)"]
    assert curve.steps == list(map(float, STEPS)) and curve.style == "-"
    assert curve.mean == pytest.approx([0.1 * s + 0.015 for s in STEPS])
    assert curve.low == pytest.approx([0.1 * s + 0.01 for s in STEPS])
    assert curves["γ=0.99 token (2 seeds)"].style == "--"
    assert {c.label for c in build_curves(runs, "rho_mean")} == {
        "γ=0.999 info (2 seeds)",
        "γ=0.99 info (2 seeds)",
    }


def test_partial_and_missing_metrics_are_reported_not_fatal(tmp_path: Path) -> None:
    run = tmp_path / "run-a"
    run.mkdir()
    rows = [step_row(1, 1.0, "token", 1), step_row(2, 1.0, "token", 1)]
    resumed = dict(step_row(2, 1.0, "token", 1), reward_mean=9.0)  # step 2 again after a resume
    text = (
        "\n".join(json.dumps(row) for row in rows)
        + "\n{not json\n"
        + json.dumps(resumed)
        + '\n{"step": 3, "rew'
    )
    (run / "metrics.jsonl").write_text(text)
    (run / "manifest.json").write_text(json.dumps({"config": {"method": "ppo"}, "seed": 7}))
    empty = tmp_path / "run-b"
    empty.mkdir()
    (empty / "manifest.json").write_text("{}")
    evaluated = tmp_path / "eval-only"
    evaluated.mkdir()
    (evaluated / "metrics.json").write_text(json.dumps({"benches": {"aime25": {"mean@k": 22.5}}}))

    report = make_report([run, empty, evaluated], tmp_path / "out")
    rows_by_run = read_csv(report.table_csv)
    assert float(rows_by_run["run-a"]["reward"]) == 9.0 and rows_by_run["run-a"]["steps"] == "2"
    assert rows_by_run["run-a"]["arm"] == "token" and rows_by_run["run-a"]["seed"] == "7"
    assert rows_by_run["run-b"]["steps"] == "" and rows_by_run["run-b"]["reward"] == ""
    assert float(rows_by_run["eval-only"]["aime25"]) == 22.5
    notes = "\n".join(report.notes)
    assert "run-a: skipped 2 malformed line(s) of metrics.jsonl" in notes
    assert "run-b: no metrics.jsonl" in notes
    assert "normalized_entropy.png not written: no run logged rho_mean" in notes
    assert "info_discount.png not written" in notes
    assert "Notes (missing or partial metrics)" in report.table_md.read_text()
    assert (tmp_path / "out" / "entropy.png").exists()
    assert not (tmp_path / "out" / "normalized_entropy.png").exists()


def test_a_sweep_whose_runs_have_not_started_still_reports(tmp_path: Path) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "norm")
    open_sweep(plan, command=[], settings={})
    report = make_report([plan.out_dir], tmp_path / "out")
    assert report.figures == []
    assert "norm-batch-info-seed1: run directory missing (status pending)" in report.notes
    assert any("final_accuracy_norm.png not written" in note for note in report.notes)
    assert len(read_csv(report.table_csv)) == 3


def test_unrecognised_or_missing_directories_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such directory"):
        read_inputs([tmp_path / "nope"])
    with pytest.raises(UsageError, match="neither a run directory"):
        read_inputs([tmp_path])
    (tmp_path / "sweep.json").write_text("[")
    with pytest.raises(UsageError, match="cannot read .*sweep.json"):
        read_inputs([tmp_path])


def test_only_accuracy_keys_count_as_benchmarks(tmp_path: Path) -> None:
    run = tmp_path / "custom"
    run.mkdir()
    rows = [
        {"step": 1, "eval_mydata": 40.0, "eval_mydata_pass1": 0.4, "eval_mydata_pass8": 0.7},
        {"step": 2, "eval_response_length_mean": 900.0, "eval_num_samples": 64.0},
    ]
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(row) for row in rows))
    report = make_report([run], tmp_path / "out")
    assert report.columns[-2:] == ["mydata", "accuracy_from"]
    assert float(read_csv(report.table_csv)["custom"]["mydata"]) == 40.0


def test_run_data_prefers_the_final_eval() -> None:
    run = RunData(name="r", path=Path("."), steps=[{"step": 1.0, "eval_aime24": 3.0}])
    assert run.final_accuracy("aime24") == (3.0, "training")
    run.eval_benches = {"aime24": {"mean@k": 4.5}}
    assert run.final_accuracy("aime24") == (4.5, "eval")
    assert run.final_accuracy("aime25") == (None, "")


def test_report_command_prints_the_table_and_writes_the_files(gamma_sweep: Path, tmp_path: Path) -> None:
    result = run_infoppo("report", str(gamma_sweep), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "gamma-0.99-token-seed2" in result.stdout and "Final metrics" in result.stdout
    assert (gamma_sweep / "report" / "final_metrics.csv").exists()
    assert f"wrote {len(CURVE_FIGURES) + 2} figure(s)" in result.stdout  # + accuracy, final accuracy


def test_report_command_with_a_missing_directory_exits_2_with_one_line(tmp_path: Path) -> None:
    result = run_infoppo("report", str(tmp_path / "missing"), cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"error: no such directory: {tmp_path / 'missing'}"]
