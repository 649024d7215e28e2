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
