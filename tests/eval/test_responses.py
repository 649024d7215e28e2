"""Responses read as an evaluation reads them: a lone UTF-16 surrogate (JSON's ``\\ud800``) is repaired
where it is read, graded and kept, and every file written is standard JSON."""

from __future__ import annotations

import json

from cli_inprocess import run_cli

from infoppo_cli.eval.sample_store import SAMPLES_FILE
from infoppo_cli.records.text import REPLACEMENT
from infoppo_cli.rundir import EVAL_METRICS_FILE as METRICS_FILE


def strict_loads(text: str):
    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def test_responses_with_a_lone_surrogate_are_graded_and_kept(monkeypatch, capsys, tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"id": "p1", "problem": "2+3?", "answer": "5"}\n')
    responses = tmp_path / "responses.jsonl"
    # the raw JSON escape, as another tool writes it: json.loads gives a lone surrogate
    responses.write_text('{"id": "p1", "response": "so \\ud800 Answer: 5"}\n{"id": "p1", "response": "6"}\n')
    args = ["eval", "--responses", responses, "--bench", f"mine={bench}", "--workers", "1"]
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "out")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "out" / SAMPLES_FILE).read_text("utf-8").splitlines()]
    assert rows[0]["response"] == f"so {REPLACEMENT} Answer: 5" and rows[0]["correct"] is True
    assert len(rows) == 2
    strict_loads((tmp_path / "out" / METRICS_FILE).read_text())


def test_a_samples_file_with_an_escaped_surrogate_is_reported_on(monkeypatch, capsys, tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"id": "p1", "problem": "2+3?", "answer": "5"}\n')
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"id": "p1", "response": "Answer: 5"}\n')
    args = ["eval", "--responses", responses, "--bench", f"mine={bench}", "--workers", "1"]
    assert run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "out")[0] == 0
    samples = tmp_path / "out" / SAMPLES_FILE
    samples.write_text(samples.read_text().replace("Answer: 5", "Answer: 5 \\udc80"))
    (tmp_path / "out" / METRICS_FILE).unlink()
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "out")
    assert code == 0, err
    assert strict_loads((tmp_path / "out" / METRICS_FILE).read_text())["benches"]["mine"]["samples"] == 1
