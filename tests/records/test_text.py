"""Text and JSON every reader accepts: lone surrogates repaired where read, no NaN/Infinity written."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.records.jsonl import parse_line
from infoppo_cli.records.text import (
    REPLACEMENT,
    NestedTooDeeply,
    dumps,
    json_file_text,
    loads,
    valid_text,
)


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
    assert not re.search("[\ud800-\udfff]", repaired) and len(repaired) == len(text)
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


def test_non_finite_numbers_are_written_as_null():
    text = json_file_text({"se": math.nan, "k": [math.inf, -math.inf, 1.5]})
    assert text.endswith("}\n") and strict_loads(text) == {"se": None, "k": [None, None, 1.5]}


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000])
def test_deep_nesting_is_malformed_json_for_every_reader(text):
    """One mechanism: a whole-file reader (``loads``) and the JSONL line parser say the same."""
    with pytest.raises(json.JSONDecodeError) as refused:  # what each reader already catches
        loads(text)
    assert isinstance(refused.value, NestedTooDeeply) and str(refused.value) == "nested too deeply to read"
    line = parse_line(1, text.encode() + b"\n")
    assert line.record is None and line.error == "not valid JSON (nested too deeply to read)"
    assert loads('{"a": [1]}') == {"a": [1]}
