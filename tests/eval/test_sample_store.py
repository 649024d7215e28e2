"""samples.jsonl: append-only, no duplicates, survives a torn last line, refuses real corruption."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.sample_store import SAMPLES_FILE, SampleRecord, SampleStore
from infoppo_cli.records.text import REPLACEMENT


def record(i: int, bench: str = "aime24", problem: str = "1", **changes) -> SampleRecord:
    fields = dict(
        bench=bench,
        id=problem,
        sample=i,
        response=f"… so Answer: {i} ✓",
        extracted=str(i),
        gold="3",
        correct=i == 3,
        reason="correct" if i == 3 else "wrong",
        num_tokens=10 + i,
        finish_reason="stop",
        prompt_sha="abc",
    )
    fields.update(changes)
    return SampleRecord(**fields)


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_append_then_reopen_round_trips(tmp_path):
    store = SampleStore(tmp_path)
    assert len(store) == 0 and not store.path.exists()
    assert store.append([record(0), record(1), record(0, bench="aime25")]) == 3
    reopened = SampleStore(tmp_path)
    assert sorted(r.key for r in reopened) == [("aime24", "1", 0), ("aime24", "1", 1), ("aime25", "1", 0)]
    assert reopened.get(("aime24", "1", 1)) == record(1)
    assert ("aime24", "1", 0) in reopened and ("aime24", "1", 9) not in reopened
    assert lines(tmp_path / SAMPLES_FILE)[1]["response"] == "… so Answer: 1 ✓"


def test_keys_are_never_written_twice(tmp_path):
    store = SampleStore(tmp_path)
    store.append([record(0), record(0, response="other")])
    assert store.append([record(0, response="again"), record(1)]) == 1
    assert SampleStore(tmp_path).append([record(1)]) == 0
    rows = lines(tmp_path / SAMPLES_FILE)
    assert [(r["sample"], r["response"]) for r in rows] == [(0, "… so Answer: 0 ✓"), (1, "… so Answer: 1 ✓")]


def test_a_torn_last_line_is_dropped_and_cut_before_the_next_append(tmp_path):
    store = SampleStore(tmp_path)
    store.append([record(0), record(1)])
    path = tmp_path / SAMPLES_FILE
    whole = record(2).to_json() + "\n"
    with open(path, "ab") as handle:
        handle.write(whole.encode()[: len(whole) // 2])  # crash in the middle of a write
    reopened = SampleStore(tmp_path)
    assert reopened.dropped_torn_line
    assert len(reopened) == 2
    reopened.append([record(2), record(3)])
    rows = lines(path)
    assert [r["sample"] for r in rows] == [0, 1, 2, 3]
    assert len(SampleStore(tmp_path)) == 4


def test_a_complete_last_record_without_newline_is_kept(tmp_path):
    path = tmp_path / SAMPLES_FILE
    path.write_text(record(0).to_json() + "\n" + record(1).to_json(), encoding="utf-8")
    store = SampleStore(tmp_path)
    assert len(store) == 2 and not store.dropped_torn_line
    store.append([record(2)])
    assert [r["sample"] for r in lines(path)] == [0, 1, 2]


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / SAMPLES_FILE
    path.write_text(record(0).to_json() + "\n\n" + record(1).to_json() + "\n", encoding="utf-8")
    assert len(SampleStore(tmp_path)) == 2


def test_corruption_before_the_last_line_is_an_error(tmp_path):
    path = tmp_path / SAMPLES_FILE
    path.write_text(record(0).to_json() + "\n{oops\n" + record(1).to_json() + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="line 2"):
        SampleStore(tmp_path)


@pytest.mark.parametrize(
    "row",
    [
        {"bench": "a", "id": "1", "sample": 0},  # fields missing
        {**json.loads(record(0).to_json()), "sample": -1},
        {**json.loads(record(0).to_json()), "sample": "0"},
        {**json.loads(record(0).to_json()), "correct": "yes"},
        {**json.loads(record(0).to_json()), "response": None},
    ],
)
def test_malformed_records_are_rejected(tmp_path, row):
    (tmp_path / SAMPLES_FILE).write_text(
        json.dumps(row) + "\n" + record(1).to_json() + "\n", encoding="utf-8"
    )
    with pytest.raises(UsageError, match="line 1"):
        SampleStore(tmp_path)


def test_a_file_changed_by_someone_else_is_not_overwritten(tmp_path):
    store = SampleStore(tmp_path)
    store.append([record(0)])
    with open(tmp_path / SAMPLES_FILE, "a", encoding="utf-8") as handle:
        handle.write(record(5).to_json() + "\n")
    with pytest.raises(UsageError, match="changed while"):
        store.append([record(1)])
    assert [r["sample"] for r in lines(tmp_path / SAMPLES_FILE)] == [0, 5]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=30), st.integers(0, 400))
def test_any_crash_point_loses_only_the_line_in_flight(tmp_path_factory, samples, cut):
    """Appending in batches and truncating the file anywhere keeps every complete line."""
    directory = tmp_path_factory.mktemp("store")
    store = SampleStore(directory)
    for start in range(0, len(samples), 4):
        store.append([record(i) for i in samples[start : start + 4]])
    path = directory / SAMPLES_FILE
    data = path.read_bytes()
    kept = data[: max(0, len(data) - cut)]
    path.write_bytes(kept)
    complete = kept.count(b"\n")
    reopened = SampleStore(directory)
    assert len(reopened) in (complete, complete + 1)  # +1: a last record complete but for its newline
    expected = list(dict.fromkeys(samples))
    reopened.append([record(i) for i in expected])
    assert sorted(r["sample"] for r in lines(path)) == sorted(expected)


def test_a_sample_with_a_lone_surrogate_is_stored_and_read_back(tmp_path):
    store = SampleStore(tmp_path)
    record = SampleRecord("b", "p1", 0, "x\ud800y", None, "5", False, "no_answer")
    assert store.append([record]) == 1
    (tmp_path / SAMPLES_FILE).read_bytes().decode("utf-8")  # valid UTF-8 on disk
    assert SampleStore(tmp_path).get(("b", "p1", 0)).response == f"x{REPLACEMENT}y"
