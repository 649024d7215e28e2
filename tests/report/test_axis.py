"""``infoppo report --x responses``: curves against the responses generated, one compute axis."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.report.axis import on_responses_axis, on_seed_mean_responses_axis
from infoppo_cli.report.core import make_report
from infoppo_cli.report.runs import RunData


def test_steps_become_cumulative_responses():
    run = RunData(
        "dapo",
        path=None,
        steps=[
            {"step": 0, "eval_x": 30.0},
            {"step": 1, "responses_generated": 8192.0, "responses_trained": 8192.0},
            {"step": 2, "responses_generated": 9000.0, "responses_trained": 8192.0, "eval_x": 50.0},
        ],
    )
    (moved,) = on_responses_axis([run], notes := [])
    assert [row["step"] for row in moved.steps] == [0.0, 8192.0, 17192.0] and not notes
    assert moved.steps[2]["eval_x"] == 50.0 and run.steps[2]["step"] == 2  # the run itself unchanged


def test_a_run_without_counts_is_left_out_with_a_note():
    run = RunData("old", path=None, steps=[{"step": 0}, {"step": 1, "policy_loss": 0.1}])
    notes: list[str] = []
    assert on_responses_axis([run], notes) == []
    assert "old: no responses counted at step 1" in notes[0]


def _seed(seed: int, per_step: list[float]) -> RunData:
    steps = [{"step": 0, "eval_x": 50.0}]
    steps += [{"step": s, "responses_generated": n, "eval_x": 50.0 + s} for s, n in enumerate(per_step, 1)]
    return RunData(f"dapo-s{seed}", path=None, sweep="m", method="dapo", seed=seed, steps=steps)


def test_a_figure_places_each_step_at_the_mean_responses_of_its_seeds_so_they_stay_aligned():
    """Two DAPO seeds whose dynamic sampling generated different numbers of responses: on each one's own
    axis they share only step 0, so no mean could be drawn; for figures both sit at the seeds' mean."""
    seeds = [_seed(1, [128.0, 256.0]), _seed(2, [128.0, 128.0])]
    own = on_responses_axis(seeds, [])
    assert [row["step"] for row in own[0].steps] == [0.0, 128.0, 384.0]
    assert [row["step"] for row in own[1].steps] == [0.0, 128.0, 256.0]
    aligned = on_seed_mean_responses_axis(seeds, notes := [])
    assert [[row["step"] for row in run.steps] for run in aligned] == [[0.0, 128.0, 320.0]] * 2 and not notes
    assert [row["eval_x"] for row in aligned[1].steps] == [50.0, 51.0, 52.0]  # the values stay each seed's


def _run_dir(root, name, per_step):
    run = root / name
    run.mkdir()
    lines = [{"step": 0, "eval_arith": 30.0, "eval_arith_pass1": 0.3}]
    lines += [
        {
            "step": s,
            "responses_generated": per_step,
            "policy_loss": 0.1,
            "eval_arith": 30.0 + s,
            "eval_arith_pass1": (30.0 + s) / 100,
        }
        for s in (1, 2)
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run


def test_the_report_draws_against_responses(tmp_path):
    runs = [_run_dir(tmp_path, "ppo", 512.0), _run_dir(tmp_path, "dapo", 8192.0)]
    report = make_report(runs, tmp_path / "out", ["svg"], x_axis="responses")
    svg = (tmp_path / "out" / "accuracy.svg").read_text()
    assert "responses generated" in svg and "training step" not in svg
    assert report.rows  # tables stay per run, by step
    assert "X axis: the responses generated up to each step" in report.captions["accuracy"]
    on_steps = make_report(runs, tmp_path / "steps", ["svg"])
    assert "X axis" not in on_steps.captions["accuracy"]


def test_an_unknown_axis_is_refused_before_anything_is_written(tmp_path):
    runs = [_run_dir(tmp_path, "ppo", 512.0)]
    with pytest.raises(UsageError, match="unknown --x 'tokens'; choose one of: steps, responses"):
        make_report(runs, tmp_path / "out", ["svg"], x_axis="tokens")
    assert not (tmp_path / "out").exists()
