"""Canonical answer text: one spelling per gold answer, one vote per extracted answer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.grading.canonical import normalise_gold, vote_key


@pytest.mark.parametrize(
    ("raw", "gold"),
    [
        (27.0, "27"),
        (-1.0, "-1"),
        ("27.0", "27"),
        ("025", "25"),
        ("000", "0"),
        (7, "7"),
        ("336^\\circ", "336"),
        ("336^{\\circ}", "336"),
        ("90°", "90"),
        ("$73$", "73"),
        ("\\boxed{073}", "73"),
        ("1,625", "1625"),
        ("\\frac{109}{33}", "\\frac{109}{33}"),
        (0.5, "0.5"),
        ("2.50", "2.50"),
        ("5\\", "5"),  # a stray trailing backslash
        ("$12\\\\$", "12"),
        ("\\{1,2\\}", "\\{1,2\\}"),
        (None, ""),
        ("  ", ""),
    ],
)
def test_normalise_gold(raw, gold):
    assert normalise_gold(raw) == gold


def test_normalise_gold_numpy_scalars():
    import numpy as np

    assert normalise_gold(np.float64(27.0)) == "27"
    assert normalise_gold(np.int64(25)) == "25"


@given(st.integers(-(10**12), 10**12))
def test_integer_answers_in_any_spelling_normalise_to_one_string(n):
    spellings = [n, float(n), f"{n}.0", f"${n}$", f"{n}^\\circ", f"\\boxed{{{n}}}", f"{n:+d}"]
    if n >= 0:
        spellings.append(f"{n:05d}")
    assert {normalise_gold(s) for s in spellings} == {str(n)}


@given(st.text(max_size=30))
def test_normalise_gold_is_idempotent(text):
    once = normalise_gold(text)
    assert normalise_gold(once) == once


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (" 025 ", "25"),
        ("$1,625$", "1625"),
        ("\\dfrac{1}{2}.", "\\frac{1}{2}"),
        ("x + 1", "x+1"),
        ("-07", "-7"),
    ],
)
def test_vote_key(raw, key):
    assert vote_key(raw) == key


@given(st.integers(-(10**9), 10**9))
def test_an_integer_votes_under_one_key_in_any_spelling(n):
    spellings = [str(n), f" {n} ", f"${n}$", f"{n}.", f"{n:,}"]
    assert {vote_key(s) for s in spellings} == {str(n)}
