"""The closing lines of ``infoppo train``: steps reached and the in-training eval from first to last."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.train.outcome import EvalCurve, eval_curves, outcome_lines


def write_log(run: Path, records: list[dict]) -> None:
    run.mkdir(parents=True, exist_ok=True)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_a_finished_run_names_its_steps_its_eval_movement_and_its_model(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_log(
        run,
        [
            {"step": 0, "eval_aime24": 10.0, "eval_aime25": 5.0},
            {"step": 1, "reward_mean": 0.2},
            {"step": 2, "reward_mean": 0.3, "eval_aime24": 30.0, "eval_aime25": 4.5},
            {"step": 3, "reward_mean": 0.4, "eval_aime24": 20.0, "eval_aime25": 7.5},
        ],
    )
    lines = outcome_lines(run, "finished", 3, ["aime24", "aime25", "amc23"], 16)
    assert lines[0] == f"finished: {run} after 3 of 3 RL step(s)"
    assert lines[1] == "  aime24 Mean@16: 10.0 at step 0 -> 20.0 at step 3 (+10.0); best 30.0 at step 2"
    assert lines[2] == "  aime25 Mean@16: 5.0 at step 0 -> 7.5 at step 3 (+2.5)"
    assert not any("amc23" in line for line in lines)  # never evaluated: no line rather than a made-up one
    assert f"model: {run / 'final'}" in lines[3]
    assert lines[-1].endswith(f"infoppo report {run}")
    assert lines[-2] == f"  metrics: {run / 'metrics.jsonl'}; full log: {run / 'train.log'}"


def test_a_stopped_run_says_where_it_stopped_and_how_to_go_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_log(run, [{"step": 0, "eval_aime24": 12.5}, {"step": 1, "reward_mean": 0.1}])
    lines = outcome_lines(run, "interrupted", 40, ["aime24"], 4)
    assert lines[0] == f"interrupted: {run} after 1 of 40 RL step(s)"
    assert lines[1] == "  aime24 Mean@4: 12.5 at step 0"
    assert "--resume" in lines[2] and not any("model:" in line for line in lines)


def test_a_run_that_logged_nothing_still_ends_with_a_line(tmp_path: Path) -> None:
    lines = outcome_lines(tmp_path / "never-started", "failed", 40, ["aime24"], 16)
    assert lines[0] == f"failed: {tmp_path / 'never-started'} after 0 of 40 RL step(s)"


def test_non_finite_accuracies_logged_as_text_are_kept_in_the_curve() -> None:
    curves = eval_curves([{"step": 0, "eval_x": "NaN"}, {"step": 5, "eval_x": 40.0}], ["x"])
    assert [step for step, _ in curves[0].points] == [0, 5]


@given(st.lists(st.floats(0, 100), min_size=1, max_size=30))
def test_the_best_point_is_the_highest_and_the_earliest_of_ties(values: list[float]) -> None:
    curve = EvalCurve("x", tuple(enumerate(values)))
    step, value = curve.best
    assert value == max(values) and step == values.index(max(values))
