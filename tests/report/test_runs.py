"""Reading runs for a report: what is malformed or missing is named, never silently dropped."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from report_runs import step_row, write_run

from infoppo_cli.errors import UsageError
from infoppo_cli.report.runs import RunData, read_inputs
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.state import open_sweep


def test_a_corrupt_metrics_line_and_a_corrupt_metrics_json_are_named_in_warnings(tmp_path: Path) -> None:
    run = tmp_path / "run-a"
    run.mkdir()
    rows = [step_row(1, 1.0, "token", 1), step_row(2, 1.0, "token", 1)]
    resumed = dict(step_row(2, 1.0, "token", 1), reward_mean=9.0)  # step 2 again after a resume
    lines = [json.dumps(rows[0]), json.dumps(rows[1]), "{not json", json.dumps(resumed), '{"step": 3, "rew']
    (run / "metrics.jsonl").write_text("\n".join(lines))
    (run / "manifest.json").write_text(json.dumps({"config": {"method": "ppo"}, "seed": 7}))
    (run / "eval").mkdir()
    (run / "eval" / "metrics.json").write_text('{"benches": ')
    inputs = read_inputs([run])
    [data] = inputs.runs
    assert data.last("reward_mean") == 9.0 and data.arm == "ppo" and data.seed == 7
    notes = "\n".join(inputs.notes)
    assert f"run-a: skipped 2 malformed line(s) of {run / 'metrics.jsonl'} (line 3, 5)" in notes
    assert f"run-a: cannot read {run / 'eval' / 'metrics.json'}" in notes


def test_a_malformed_manifest_is_the_manifest_readers_one_line_as_a_warning(tmp_path: Path) -> None:
    run, evals = tmp_path / "run-m", tmp_path / "evals"
    (run / "final").mkdir(parents=True)
    (run / "metrics.jsonl").write_text(json.dumps(step_row(1, 1.0, "token", 1)) + "\n")
    (run / "manifest.json").write_text(json.dumps({"config": {"method": 5}, "seed": 7}))
    evals.mkdir()
    document = {"settings": {"model": str(run / "final")}, "benches": {"aime25": {"mean@k": 20.0}}}
    (evals / "metrics.json").write_text(json.dumps(document))
    inputs = read_inputs([run, evals])
    problem = f"{run / 'manifest.json'} is not an infoppo train manifest: config.method = 5 is not a string"
    assert f"run-m: {problem}" in inputs.notes  # the run, and the eval of its model, both say so
    assert sum(problem in note for note in inputs.notes) == 2
    assert [data.method for data in inputs.runs] == [None, None] and inputs.runs[0].seed is None


def test_lines_without_step_use_their_line_number_and_say_so(tmp_path: Path) -> None:
    run = tmp_path / "stepless"
    run.mkdir()
    (run / "metrics.jsonl").write_text(
        '{"reward_mean": 0.1}\n\n{"reward_mean": 0.2}\n{"step": 9, "reward_mean": 1}\n'
    )
    inputs = read_inputs([run])
    assert inputs.runs[0].series("reward_mean") == [(1.0, 0.1), (3.0, 0.2), (9.0, 1.0)]
    assert any(
        "2 line(s)" in note and "(line 1, 3)" in note and "line number is used" in note
        for note in inputs.notes
    )


def test_lines_with_invalid_values_are_skipped_with_a_warning_naming_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "bad-values"
    run.mkdir()
    (run / "metrics.jsonl").write_text(
        '{"step": 1, "reward_mean": 0.1}\n'
        '{"step": -5, "reward_mean": 0.2}\n'
        '{"step": 2, "reward_mean": "high"}\n'
    )
    inputs = read_inputs([run])
    assert inputs.runs[0].series("reward_mean") == [(1, 0.1)]
    assert (
        f"bad-values: skipped 2 line(s) of {run / 'metrics.jsonl'} with invalid values "
        '(line 2: step -5 is negative; line 3: reward_mean "high" is not a number)'
    ) in inputs.notes


def test_a_run_without_metrics_and_an_eval_directory_are_read(tmp_path: Path) -> None:
    empty = tmp_path / "run-b"
    empty.mkdir()
    (empty / "manifest.json").write_text("{}")
    evaluated = tmp_path / "eval-only"
    evaluated.mkdir()
    (evaluated / "metrics.json").write_text(json.dumps({"benches": {"aime25": {"mean@k": 22.5}}}))
    inputs = read_inputs([empty, evaluated])
    assert "run-b: no metrics.jsonl" in inputs.notes
    assert inputs.runs[1].final_accuracy("aime25") == (22.5, "eval")


def test_a_folder_of_runs_is_read_and_a_folder_without_runs_is_refused(tmp_path: Path) -> None:
    for seed in (1, 2):
        write_run(tmp_path / "runs" / f"r{seed}", 0.999, "info", seed)
    (tmp_path / "runs" / "notes").mkdir()
    assert [run.name for run in read_inputs([tmp_path / "runs"]).runs] == ["r1", "r2"]
    (tmp_path / "nothing").mkdir()
    with pytest.raises(UsageError, match="no runs found in .*nothing"):
        read_inputs([tmp_path / "nothing"])


def test_a_sweep_whose_runs_have_not_started_is_read_with_notes(tmp_path: Path) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "norm")
    open_sweep(plan, command=[], settings={})
    inputs = read_inputs([plan.out_dir])
    assert len(inputs.runs) == 3 and inputs.sweep_kinds == {"norm": "norm"}
    assert "norm-batch-info-seed1: run directory missing (status pending)" in inputs.notes
    assert inputs.runs[0].parameters == {"norm": "global"}


def test_missing_directories_malformed_sweeps_and_empty_sweeps_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such directory"):
        read_inputs([tmp_path / "nope"])
    (tmp_path / "sweep.json").write_text("[")
    with pytest.raises(UsageError, match="cannot read .*sweep.json"):
        read_inputs([tmp_path])
    (tmp_path / "sweep.json").write_text(json.dumps({"kind": "gamma", "runs": []}))
    with pytest.raises(UsageError, match="no runs found"):
        read_inputs([tmp_path])


def test_run_data_prefers_the_final_eval() -> None:
    run = RunData(name="r", path=Path("."), steps=[{"step": 1.0, "eval_aime24": 3.0}])
    assert run.final_accuracy("aime24") == (3.0, "training")
    run.eval_benches = {"aime24": {"mean@k": 4.5}}
    assert run.final_accuracy("aime24") == (4.5, "eval")
    assert run.final_accuracy("aime25") == (None, "")


def test_non_finite_values_are_read_as_data_in_every_encoding(tmp_path: Path) -> None:
    run = tmp_path / "diverged"
    run.mkdir()
    lines = [
        '{"step": 1, "reward_mean": 0.5, "entropy_mean": 1.0}',
        '{"step": 2, "reward_mean": NaN, "entropy_mean": Infinity}',  # Python's json default
        '{"step": 3, "reward_mean": "NaN", "entropy_mean": "-Infinity"}',  # standard JSON
        '{"step": 4, "reward_mean": null, "entropy_mean": "inf"}',
    ]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    [data] = read_inputs([run]).runs
    rewards = [value for _, value in data.series("reward_mean")]
    assert rewards[0] == 0.5 and all(math.isnan(value) for value in rewards[1:])
    assert [value for _, value in data.series("entropy_mean")] == [1.0, math.inf, -math.inf, math.inf]
    assert math.isnan(data.last("reward_mean"))  # not 0.5 from step 1


def test_a_nan_mean_at_k_is_kept_and_a_bench_without_one_is_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_run(run, 0.999, "info", 1)
    (run / "eval").mkdir()
    benches = '{"aime24": {"mean@k": NaN}, "aime25": {"k": 16}, "amc23": {"mean@k": "NaN"}}'
    (run / "eval" / "metrics.json").write_text('{"benches": ' + benches + "}")
    inputs = read_inputs([run])
    [data] = inputs.runs
    score, source = data.final_accuracy("aime24")
    assert math.isnan(score) and source == "eval"  # not the in-training eval_aime24 of step 4
    assert math.isnan(data.final_accuracy("amc23")[0])
    assert (
        f"run: {run / 'eval' / 'metrics.json'} has no Mean@k number for aime25; it is left out"
        in inputs.notes
    )


def test_a_file_given_as_a_directory_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "metrics.jsonl").write_text("{}\n")
    with pytest.raises(
        UsageError, match="metrics.jsonl is a file; give run, sweep or eval output directories"
    ):
        read_inputs([tmp_path / "metrics.jsonl"])


def test_eval_directories_are_named_by_model_and_two_of_one_model_are_told_apart(tmp_path: Path) -> None:
    for name in ("t1", "t16"):
        (tmp_path / name).mkdir()
        document = {"benches": {"aime24": {"mean@k": 20.0}}, "settings": {"model": "Qwen/Qwen3-4B"}}
        (tmp_path / name / "metrics.json").write_text(json.dumps(document))
    runs = read_inputs([tmp_path / "t1", tmp_path / "t16"]).runs
    assert [run.name for run in runs] == [
        f"Qwen/Qwen3-4B [{tmp_path / 't1'}]",
        f"Qwen/Qwen3-4B [{tmp_path / 't16'}]",
    ]
    assert all(run.eval_only and run.model == "Qwen/Qwen3-4B" for run in runs)


def test_a_run_recorded_running_that_no_process_holds_is_reported_interrupted(tmp_path: Path) -> None:
    from infoppo_cli.rundir import RunDir
    from infoppo_cli.rundir.lock import run_lock

    run = tmp_path / "run-a"
    run.mkdir()
    (run / "metrics.jsonl").write_text(json.dumps(step_row(1, 1.0, "token", 1)) + "\n")
    (run / "manifest.json").write_text(
        json.dumps({"config": {"method": "ppo"}, "seed": 7, "status": "running"})
    )
    [data] = read_inputs([run]).runs
    assert data.status == "interrupted"  # what ran it died before it could record its end
    lock = run_lock(RunDir(run))
    assert lock.acquire()
    try:
        [data] = read_inputs([run]).runs
        assert data.status == "running"
    finally:
        lock.release()


def test_a_sweep_recorded_by_an_older_infoppo_is_still_reported(tmp_path: Path) -> None:
    """sweep.json of schema 1 (train commands, not requests): `--resume` refuses it, the report reads it."""
    sweep = tmp_path / "gamma-old"
    phase = {"name": "train", "command": ["infoppo", "train", "--gamma", "0.99"], "status": "done"}
    record = {
        "name": "gamma-0.99-info-seed1", "kind": "gamma", "value": 0.99, "value_label": "0.99",
        "time": "info", "method": "infoppo", "seed": 1, "parameters": {"gamma": 0.99},
        "output_dir": str(sweep / "gamma-0.99-info-seed1"), "phases": [phase], "status": "done",
    }  # fmt: skip
    sweep.mkdir()
    (sweep / "sweep.json").write_text(json.dumps({"schema": 1, "kind": "gamma", "runs": [record]}))
    inputs = read_inputs([sweep])
    assert inputs.sweep_kinds == {"gamma-old": "gamma"}
    assert [(run.name, run.value_label, run.parameters) for run in inputs.runs] == [
        ("gamma-0.99-info-seed1", "0.99", {"gamma": 0.99})
    ]
