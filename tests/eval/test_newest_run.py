"""``infoppo eval`` without ``--model``: the newest run's ``final/`` under ``./runs``, finished runs first."""

from __future__ import annotations

import json
import os

import pytest
from cli_inprocess import run_cli

from infoppo_cli.eval.newest_run import choose_model, trained_models


def make_run(root, name, status=None, end_time=None, final=True, manifest=True):
    run = root / name
    run.mkdir(parents=True)
    if manifest:
        record = {key: value for key, value in (("status", status), ("end_time", end_time)) if value}
        (run / "manifest.json").write_text(json.dumps(record))
    if final:
        (run / "final").mkdir()
        (run / "final" / "config.json").write_text("{}")
    return run


def test_a_finished_run_comes_before_a_newer_failed_one_and_the_newest_wins(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "old", "finished", "2026-01-01T05:00:00+00:00")
    make_run(runs, "new", "finished", "2026-01-02T05:00:00+00:00")
    make_run(runs, "failed", "failed", "2026-01-03T05:00:00+00:00")
    make_run(runs, "group/nested", "finished", "2025-12-31T05:00:00+00:00")  # runs/<group>/<run>
    make_run(runs, "no-final", "finished", "2026-02-01T05:00:00+00:00", final=False)
    make_run(runs, "no-manifest", manifest=False)  # a final/ outside any run is not a candidate
    found = [model.path.parent.name for model in trained_models(runs)]
    assert found == ["new", "old", "nested", "failed"]
    choice = choose_model(runs)
    assert choice.chosen.path == runs / "new" / "final" and choice.problem is None
    assert "the newest finished run under" in choice.note()
    others = choice.others_text()  # the other candidates newest first, with their status and time
    assert others.startswith(f"{runs}/failed/final (failed, 2026-01-03 05:00 UTC)")
    assert "old/final (finished, 2026-01-01 05:00 UTC)" in others


def test_without_a_finished_run_the_newest_is_chosen_and_said_so(tmp_path):
    runs = tmp_path / "runs"
    older = make_run(runs, "a", "failed", "2026-01-01T00:00:00+00:00")
    make_run(runs, "b", manifest=True)  # no times recorded: final/'s modification time
    os.utime(older / "final" / "config.json", (0, 0))
    choice = choose_model(runs)
    assert choice.chosen.path.parent.name == "b" and choice.chosen.status == "unknown"
    assert "none has finished" in choice.row()


def test_no_candidate_says_how_to_name_a_model(tmp_path):
    choice = choose_model(tmp_path / "runs")  # no runs/ at all
    assert choice.chosen is None
    assert "pass --model PATH_OR_HF_ID" in choice.problem and choice.row().startswith("no model: ")


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "1", "problem": "1+1?", "answer": "2"}) + "\n")
    return tmp_path


def test_eval_without_a_model_and_no_run_stops_with_one_line(workspace, monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", "aime25", "--samples", "16")
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        "error: no model to evaluate: no run under runs/ has a final/ model (from `infoppo train`); pass "
        "--model PATH_OR_HF_ID (a model directory or a Hugging Face id), or --responses FILE to grade "
        "existing responses"
    ]


def test_a_dry_run_without_a_model_prints_its_plan_first(workspace, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = run_cli(
        monkeypatch, capsys, "eval", "--bench", "l=b.jsonl", "--backend", "hf", "--dry-run"
    )
    assert code == 2
    assert "no model: no run under runs/ has a final/ model" in out and "l (1 problems)" in out
    assert "pass --model PATH_OR_HF_ID" in err


def test_eval_without_a_model_uses_the_newest_finished_run(workspace, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "300")
    make_run(workspace / "runs", "r1", "finished", "2026-01-02T05:00:00+00:00")
    make_run(workspace / "runs", "r2", "running", "2026-01-03T05:00:00+00:00")
    args = ("eval", "--bench", "l=b.jsonl", "--backend", "hf", "--dry-run")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "runs/r1/final (finished, 2026-01-02 05:00 UTC): the newest finished run under runs/" in out
    assert "runs/r2/final (running, 2026-01-03 05:00 UTC)" in out  # the other candidate, listed
    assert f"{workspace / 'runs' / 'r1' / 'eval'}" in out.replace("\n", "")  # RUN/eval, as for --model
    code, _, err = run_cli(monkeypatch, capsys, *args[:-1])  # a real run says which model it took
    assert err.startswith("note: no --model given: evaluating runs/r1/final (finished, 2026-01-02 05:00 UTC)")
