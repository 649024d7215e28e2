"""JSONL reading with line numbers, and the append-only log's one torn-line policy."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.records import JsonlLog, iter_jsonl


def test_iter_jsonl_numbers_lines_and_names_bad_ones(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n[1, 2]\n{broken\n\xff\xfe\n{"b": 2}\n{"c": ')
    lines = list(iter_jsonl(path))
    assert [line.number for line in lines] == [1, 3, 4, 5, 6, 7]
    assert lines[0].record == {"a": 1} and lines[4].record == {"b": 2}
    assert [line.record for line in lines[1:4]] == [None, None, None]
    assert "list" in lines[1].error and "JSON" in lines[2].error
    assert [line.torn for line in lines] == [False] * 5 + [True]  # only a last line cut short is torn


def _texts(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_a_log_reads_what_it_appended(tmp_path):
    log = JsonlLog(tmp_path / "deep" / "log.jsonl")
    assert log.read() == [] and not log.path.exists()  # reading writes nothing
    assert log.append(['{"a": 1}', '{"a": 2}']) == 2 and log.append([]) == 0
    assert JsonlLog(log.path).read() == [(1, {"a": 1}), (2, {"a": 2})]


def test_a_torn_last_line_is_skipped_and_cut_off_by_the_next_append(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n{"a": 3, "b')
    log = JsonlLog(path)
    assert log.read() == [(1, {"a": 1}), (3, {"a": 2})] and log.torn_line == 4
    assert path.read_text().endswith('"b')  # nothing is written by reading
    log.append(['{"a": 4}'])
    assert _texts(path) == ['{"a": 1}', "", '{"a": 2}', '{"a": 4}']


def test_a_whole_last_record_without_its_newline_is_kept(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}')
    log = JsonlLog(path)
    assert [value for _, value in log.read()] == [{"a": 1}, {"a": 2}] and log.torn_line is None
    log.append(['{"a": 3}'])
    assert _texts(path) == ['{"a": 1}', '{"a": 2}', '{"a": 3}']


def test_a_last_line_the_owner_refuses_is_torn_but_a_whole_one_is_damage(tmp_path):
    def parse(record):
        if "a" not in record:
            raise ValueError("no a")
        return record["a"]

    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}')
    log = JsonlLog(path, "entry")
    assert log.read(parse) == [(1, 1)] and log.torn_line == 2
    path.write_text('{"a": 1}\n{"b": 2}\n{"a": 3}\n')
    with pytest.raises(UsageError, match=r"log.jsonl line 2 is not a valid entry \(no a\); fix or remove it"):
        JsonlLog(path, "entry").read(parse)
    path.write_text('{broken\n{"a": 3}\n')
    with pytest.raises(UsageError, match="line 1 is not a valid entry"):
        JsonlLog(path, "entry").read(parse)


def test_an_append_without_a_read_finds_the_end_from_the_last_line(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{broken\n{"step": 1}\n{"step": 2, "x"')  # damage before the end is left to readers
    log = JsonlLog(path)
    log.append(['{"step": 3}'])
    assert _texts(path) == ["{broken", '{"step": 1}', '{"step": 3}'] and log.torn_line == 3
    path.write_text('{"step": 1}')
    JsonlLog(path).append(['{"step": 2}'])
    assert _texts(path) == ['{"step": 1}', '{"step": 2}']


def test_a_file_another_writer_changed_is_not_appended_to(tmp_path):
    log = JsonlLog(tmp_path / "log.jsonl", other_writer="another test writing it")
    log.append(['{"a": 1}'])
    with open(log.path, "a") as handle:
        handle.write('{"a": 5}\n')
    with pytest.raises(UsageError, match="changed while infoppo was writing it; is another test writing it"):
        log.append(['{"a": 2}'])
    assert _texts(log.path) == ['{"a": 1}', '{"a": 5}']


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 99), min_size=1, max_size=20), st.integers(0, 200))
def test_any_crash_point_loses_only_the_line_in_flight(tmp_path_factory, values, cut):
    """Cutting the file anywhere keeps every whole line, and appending again leaves a clean log."""
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    JsonlLog(path).append(json.dumps({"v": v}) for v in values)
    data = path.read_bytes()
    path.write_bytes(data[: max(0, len(data) - cut)])
    whole = path.read_bytes().count(b"\n")
    log = JsonlLog(path)
    kept = [record["v"] for _, record in log.read()]
    assert kept[:whole] == values[:whole] and len(kept) in (whole, whole + 1)
    log.append(['{"v": -1}'])
    assert [record["v"] for _, record in JsonlLog(path).read()] == [*kept, -1]
