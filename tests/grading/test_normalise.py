"""The one normaliser: matrix environments as pmatrix, stray trailing backslashes dropped; and canonical
answer text: one spelling per gold answer, one vote per extracted answer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import grade, normalise_answer
from infoppo_cli.grading.normalise import (
    matrices_as_pmatrix,
    normalise_gold,
    scientific_as_decimal,
    strip_trailing_backslashes,
    vote_key,
)


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("5\\", "5"),
        ("5 \\", "5"),
        ("5\\\\", "5"),  # a line break
        ("$5\\\\$", "$5$"),  # inside a closing $
        ("\\[ 5 \\\\ \\]", "\\[ 5\\]"),
        ("(1,2)\\ ", "(1,2)"),
        ("\\{1,2\\}", "\\{1,2\\}"),  # an escaped brace ends in a brace: kept
        ("\\frac{1}{2}", "\\frac{1}{2}"),
        ("\\\\", ""),
        ("$$", "$$"),
    ],
)
def test_strip_trailing_backslashes(text, stripped):
    assert strip_trailing_backslashes(text) == stripped


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("\\begin{bmatrix}1\\end{bmatrix}", "\\begin{pmatrix}1\\end{pmatrix}"),
        ("\\begin{Bmatrix}1\\end{Bmatrix}", "\\begin{pmatrix}1\\end{pmatrix}"),
        ("\\begin{smallmatrix}1\\end{smallmatrix}", "\\begin{pmatrix}1\\end{pmatrix}"),
        ("\\begin{matrix}1\\end{matrix}", "\\begin{pmatrix}1\\end{pmatrix}"),
        ("\\begin{bmatrix*}[r]1\\end{bmatrix*}", "\\begin{pmatrix}1\\end{pmatrix}"),
        ("\\begin { pmatrix } 1 \\end { pmatrix }", "\\begin{pmatrix} 1 \\end{pmatrix}"),
        ("\\begin{pmatrix}1\\\\[4pt]2\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
        ("\\begin{array}{c|c}1&2\\\\\\hline 3&4\\end{array}", "\\begin{array}{c|c}1&2\\\\ 3&4\\end{array}"),
        ("\\begin{vmatrix}1\\end{vmatrix}", "\\begin{vmatrix}1\\end{vmatrix}"),  # a determinant: kept
        ("\\begin{bmatrix}[1]\\end{bmatrix}", "\\begin{pmatrix}[1]\\end{pmatrix}"),  # [1] is an entry
    ],
)
def test_matrices_as_pmatrix(text, written):
    assert matrices_as_pmatrix(text) == written


def test_the_normaliser_applies_both_to_either_side():
    assert normalise_answer("\\begin{Bmatrix}1&2\\end{Bmatrix}\\\\") == "\\begin{pmatrix}1&2\\end{pmatrix}"
    assert normalise_answer("33\\,124\\,147\\") == "33124147"  # an integer gold once the backslash is gone


_ENVIRONMENTS = ["pmatrix", "bmatrix", "Bmatrix", "matrix", "smallmatrix", "pmatrix*", "bmatrix*"]


_ANSWER_FORMS = ["\\boxed{{{}}}", "Answer: {}", "Answer: ${}$", "So the final answer is {}"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.lists(st.integers(-9, 9), min_size=2, max_size=2), min_size=1, max_size=3),
    st.sampled_from(_ENVIRONMENTS),
    st.sampled_from(_ENVIRONMENTS),
    st.sampled_from(_ANSWER_FORMS),
)
def test_a_matrix_compares_by_its_entries_whatever_the_environment(rows, written, gold_environment, form):
    def matrix(environment: str, entries: list[list[int]]) -> str:
        body = "\\\\".join("&".join(str(entry) for entry in row) for row in entries)
        return f"\\begin{{{environment}}}{body}\\end{{{environment}}}"

    assert grade(form.format(matrix(written, rows)), matrix(gold_environment, rows)).correct
    changed = [[entry + 1 for entry in row] for row in rows]
    assert not grade(form.format(matrix(written, changed)), matrix(gold_environment, rows)).correct


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("1e3", "1000"),
        ("2.5e-3", "0.0025"),
        ("2.50e-3", "0.00250"),  # the mantissa's places are kept
        ("7E6", "7000000"),
        ("-1.5e+2", "-150"),
        ("\\frac{1e3}{2}", "\\frac{1000}{2}"),
        ("(1e3, 2e3)", "(1000, 2000)"),
        ("1e400", "1\\times10^{400}"),  # never 400 digits
        ("3e", "3e"),  # Euler's number
        ("e^{3}", "e^{3}"),
        ("2e3x", "2e3x"),  # joined to a letter: not a number
        ("x1e3", "x1e3"),
        ("0x1e3", "0x1e3"),
    ],
)
def test_scientific_as_decimal(text, written):
    assert scientific_as_decimal(text) == written


@settings(max_examples=25, deadline=None)
@given(
    st.decimals(min_value=1, max_value=999, places=2),
    st.integers(-4, 12),  # below 1e-4, math-verify's 6 places cannot tell 1e-8 from 1e-7
    st.sampled_from(["e", "E"]),
    st.sampled_from(["Answer: {}", "Answer: ${}$", "\\boxed{{{}}}", "Answer: \\({}\\)"]),
)
def test_a_number_in_scientific_notation_is_the_number_it_names(mantissa, exponent, mark, form):
    value = mantissa.scaleb(exponent)
    gold = format(value.normalize(), "f")
    assert grade(form.format(f"{mantissa}{mark}{exponent}"), gold).correct
    assert grade(f"\\boxed{{{gold}}}", f"{mantissa}{mark}{exponent}").correct
    assert not grade(form.format(f"{mantissa}{mark}{exponent + 1}"), gold).correct


@settings(max_examples=25, deadline=None)
@given(st.integers(-(10**6), 10**6), st.sampled_from(["\\", "\\\\", " \\", "\\ "]), st.booleans())
def test_a_gold_with_a_stray_trailing_backslash_grades_as_the_gold_without_it(n, stray, delimited):
    gold = f"${n}{stray}$" if delimited else f"{n}{stray}"
    assert grade(f"\\boxed{{{n}}}", gold).correct
    assert not grade(f"\\boxed{{{n + 1}}}", gold).correct


# --- canonical text for evaluation's bookkeeping ---


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
