"""The one normaliser: matrix environments as pmatrix, stray trailing backslashes dropped."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import grade, normalise_answer
from infoppo_cli.grading.normalise import matrices_as_pmatrix, strip_trailing_backslashes


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


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.lists(st.integers(-9, 9), min_size=2, max_size=2), min_size=1, max_size=3),
    st.sampled_from(_ENVIRONMENTS),
    st.sampled_from(_ENVIRONMENTS),
)
def test_a_matrix_compares_by_its_entries_whatever_the_environment(rows, written, gold_environment):
    def matrix(environment: str, entries: list[list[int]]) -> str:
        body = "\\\\".join("&".join(str(entry) for entry in row) for row in entries)
        return f"\\begin{{{environment}}}{body}\\end{{{environment}}}"

    assert grade(f"\\boxed{{{matrix(written, rows)}}}", matrix(gold_environment, rows)).correct
    changed = [[entry + 1 for entry in row] for row in rows]
    assert not grade(f"\\boxed{{{matrix(written, changed)}}}", matrix(gold_environment, rows)).correct


@settings(max_examples=25, deadline=None)
@given(st.integers(-(10**6), 10**6), st.sampled_from(["\\", "\\\\", " \\", "\\ "]), st.booleans())
def test_a_gold_with_a_stray_trailing_backslash_grades_as_the_gold_without_it(n, stray, delimited):
    gold = f"${n}{stray}$" if delimited else f"{n}{stray}"
    assert grade(f"\\boxed{{{n}}}", gold).correct
    assert not grade(f"\\boxed{{{n + 1}}}", gold).correct
