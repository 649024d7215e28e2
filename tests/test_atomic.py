"""Atomic writes: readers see the old file or the new one, never a torn one."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.atomic import atomic_write_json, atomic_write_text, atomic_writer


def test_writes_and_replaces(tmp_path):
    path = tmp_path / "deep" / "out.json"
    atomic_write_json(path, {"a": 1})
    atomic_write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]  # no temporary left behind


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "metrics.json"
    atomic_write_text(path, "old")
    with pytest.raises(RuntimeError), atomic_writer(path) as handle:
        handle.write("half of the new")
        raise RuntimeError("crash mid-write")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def test_iter_jsonl_numbers_lines_and_names_bad_ones(tmp_path):
    from infoppo_cli.atomic import iter_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n[1, 2]\n{broken\n\xff\xfe\n{"b": 2}\n')
    lines = list(iter_jsonl(path))
    assert [line.number for line in lines] == [1, 3, 4, 5, 6]
    assert lines[0].record == {"a": 1} and lines[-1].record == {"b": 2}
    assert [line.record for line in lines[1:4]] == [None, None, None]
    assert "list" in lines[1].error and "JSON" in lines[2].error


def test_utc_timestamp_is_iso_to_the_second():
    import datetime

    from infoppo_cli.atomic import utc_timestamp

    stamp = utc_timestamp()
    parsed = datetime.datetime.fromisoformat(stamp)
    assert parsed.tzinfo is not None and parsed.microsecond == 0
