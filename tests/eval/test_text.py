"""Text and JSON every reader accepts: lone surrogates repaired where read, no NaN/Infinity written."""

from __future__ import annotations

import json
import math

from cli_inprocess import run_cli
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.eval.outputs import METRICS_FILE
from infoppo_cli.eval.sample_store import SAMPLES_FILE, SampleRecord, SampleStore
from infoppo_cli.eval.text import REPLACEMENT, dumps, has_lone_surrogate, valid_text, write_json


def strict_loads(text: str):
    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def test_valid_text_replaces_lone_surrogates_only():
    assert valid_text("a\ud800b\udfffc") == f"a{REPLACEMENT}b{REPLACEMENT}c"
    assert valid_text("😀 é 中") == "😀 é 中"
    assert json.loads('"\\ud83d\\ude00"') == "😀"  # a valid pair is one character, never touched


@given(st.text())
def test_valid_text_always_encodes_and_keeps_what_was_valid(text):
    repaired = valid_text(text)
    repaired.encode("utf-8")
    assert not has_lone_surrogate(repaired) and len(repaired) == len(text)
    assert all(a == b or b == REPLACEMENT for a, b in zip(text, repaired, strict=True))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_dumps_writes_standard_json_that_encodes(value):
    text = dumps(value, ensure_ascii=False)
    text.encode("utf-8")
    strict_loads(text)


def test_non_finite_numbers_are_written_as_null(tmp_path):
    write_json(tmp_path / "m.json", {"se": math.nan, "k": [math.inf, -math.inf, 1.5]})
    assert strict_loads((tmp_path / "m.json").read_text()) == {"se": None, "k": [None, None, 1.5]}


def test_a_sample_with_a_lone_surrogate_is_stored_and_read_back(tmp_path):
    store = SampleStore(tmp_path)
    record = SampleRecord("b", "p1", 0, "x\ud800y", None, "5", False, "no_answer")
    assert store.append([record]) == 1
    (tmp_path / SAMPLES_FILE).read_bytes().decode("utf-8")  # valid UTF-8 on disk
    assert SampleStore(tmp_path).get(("b", "p1", 0)).response == f"x{REPLACEMENT}y"


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
