"""Equivalence: the one normaliser, math-verify verdicts, every POLICY entry, in-process deadlines."""

from __future__ import annotations

import threading
import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import (
    POLICY,
    Verdict,
    explain,
    extract_answer,
    grade,
    inner_timeout_seconds,
    normalise_answer,
)

PATHOLOGICAL = "So the result is \\boxed{9^{9^{9}}}."  # math-verify's comparison runs for seconds

# --- verdicts -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("Answer: 0.5", "\\frac{1}{2}"),  # fraction gold, decimal answer
        ("\\boxed{\\frac{2}{4}}", "0.5"),
        ("\\boxed{073}", "73"),  # leading zeros on either side
        ("Answer: 25", "025"),
        ("\\boxed{27}", "27.0"),  # AMC23's float golds
        ("\\boxed{336^\\circ}", "336"),  # degrees
        ("\\boxed{1625 \\text{ square centimeters}}", "1625"),  # units
        ("\\boxed{1,625}", "1625"),
        ("First \\boxed{100} was wrong; actually \\boxed{721}", "721"),
        ("**Answer:** $\\sqrt{2}$", "\\sqrt{2}"),
        ("\\boxed{(x+1)^2}", "x^2+2x+1"),
        ("\\boxed{(1,\\infty)}", "x>1"),  # verify(gold, prediction): this order holds, the other does not
    ],
)
def test_correct_answers(response, gold):
    verdict = grade(response, gold)
    assert verdict.correct and verdict.reason == "correct"
    assert verdict.extracted == extract_answer(response)


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("\\boxed{0.6}", "\\frac{1}{2}"),
        ("Answer: 74", "73"),
        ("\\boxed{x>1}", "(1,\\infty)"),
        ("\\boxed{\\text{no idea}}", "5"),
        ("\\boxed{3} and \\boxed{5}", "3"),
    ],
)
def test_wrong_answers(response, gold):
    verdict = grade(response, gold)
    assert not verdict.correct and verdict.reason == "wrong" and verdict.extracted is not None


def test_no_answer_and_truncation_are_not_credited():
    assert grade("... 204 - ... I am still thinking and the answer is", "204") == Verdict(
        False, None, "no_answer"
    )
    assert grade("We get \\boxed{20", "204") == Verdict(False, None, "no_answer")


def test_unparseable_gold_is_an_error_not_a_wrong_answer():
    assert grade("\\boxed{5}", "") == Verdict(False, "5", "error")


@pytest.mark.slow
def test_pathological_answer_times_out_in_process():
    started = time.monotonic()
    verdict = grade(PATHOLOGICAL, "540")
    assert verdict == Verdict(False, "9^{9^{9}}", "timeout")
    assert time.monotonic() - started < 3 * inner_timeout_seconds(10.0) + 2


def test_grade_works_off_the_main_thread():
    found: list[Verdict] = []
    worker = threading.Thread(target=lambda: found.append(grade("Answer: 073", "73")))
    worker.start()
    worker.join(timeout=30)
    assert found == [Verdict(True, "073", "correct")]


@settings(deadline=None)  # math-verify's first call imports and warms up
@given(st.integers(-(10**9), 10**9))
def test_integer_answers(n):
    assert grade(f"\\boxed{{{n}}}", str(n)).correct
    assert grade(f"Answer: {n}", f"{float(n)}").correct
    assert not grade(f"\\boxed{{{n + 1}}}", str(n)).correct


@settings(max_examples=60, deadline=None)
@given(st.integers(-999, 999), st.sampled_from([2, 4, 5, 8, 10, 16, 20, 25, 40, 50]))
def test_fractions_against_decimals(p, q):
    value = Fraction(p, q)
    decimal = f"{float(value):.6f}".rstrip("0").rstrip(".")
    assert grade(f"\\boxed{{\\frac{{{p}}}{{{q}}}}}", decimal).correct
    assert grade(f"Answer: {decimal}", f"\\frac{{{p}}}{{{q}}}").correct
    assert not grade(f"Answer: {float(value) + 0.25}", f"\\frac{{{p}}}{{{q}}}").correct


# --- six ways a grader goes wrong, each a test ---------------------------------------------------------

PREFIX_TRAPS = [  # 1. a wrong answer must never be accepted by its leading number
    ("Answer: $4\\sqrt{2}$", "4"),
    ("Answer: 3\\pi", "3"),
    ("Answer: 2^{10}", "2"),
    ("Answer: 3 pi", "3"),
    ("\\boxed{2x}", "2"),
    ("Answer: The area is $4\\sqrt{2}$ square units.", "4"),
    ("\\boxed{33\\,124\\,147}", "304"),
]


@pytest.mark.parametrize(("response", "gold"), PREFIX_TRAPS)
def test_no_wrong_answer_is_accepted_by_its_prefix(response, gold):
    assert grade(response, gold).reason == "wrong"


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("Answer: $2^{10}$", "1024"),  # 1. LaTeX on an Answer: line
        ("Answer: $4\\sqrt{2}$", "4\\sqrt{2}"),
        ("Answer: 2^{10}", "1024"),
        (
            "\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}}",
            MATRIX_GOLD := "\\begin{pmatrix}\n1 & 2 \\\\\n3 & 4\n\\end{pmatrix}",
        ),  # 2.
        ("\\boxed{33\\,124\\,147}", "33124147"),  # 3. thousands separators
        ("\\boxed{33 124 147}", "33124147"),
        ("\\boxed{1 000}", "1000"),
        ("\\boxed{33{,}124{,}147}", "33 124 147"),
        ("\\boxed{1}, \\boxed{2}, \\boxed{3}", "\\{1,2,3\\}"),  # 4. several boxes
        ("Answer: \\[ \n 9 \n \\]", "9"),  # 5. display math after Answer:
        ("Answer: The area is $4\\sqrt{2}$ square units.", "4\\sqrt{2}"),
        ("\\boxed{100 dollars}", "100"),  # 6. units, words, modulus
        ("\\boxed{5\\mathrm{m}^2}", "5"),
        ("\\boxed{9 \\pmod{11}}", "9"),
        ("\\boxed{x \\equiv 3 \\pmod 7}", "3"),
    ],
)
def test_answers_that_graders_often_miss_are_graded_correct(response, gold):
    assert grade(response, gold).reason == "correct"


@pytest.mark.parametrize(
    ("response", "gold", "correct"),
    [
        ("Final Answer: The final answer is 12,000,023. I hope it is correct.", "12000023", True),
        ("Final Answer: The final answer is 12,000,023. I hope it is correct.", "12000024", False),
        ("Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct.", "3", True),
        ("Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct.", "8", False),
        ("Answer: The largest $n$ for $f(n)$ is 19.", "19", True),
        ("\\boxed{1,000.99\\,\\mathrm{m}^2}", "1000.99", True),  # a unit after LaTeX spacing
        ("\\boxed{12~\\text{cm}}", "12", True),
        ("\\boxed{12\\;\\mathrm{km}}", "13", False),
        ("\\boxed{17 \\bmod 5 = 2}", "2", True),  # the value after the last '='
        ("\\boxed{17 \\bmod 5 = 2}", "17", False),
        ("\\boxed{\\emptyset}", "\\varnothing", True),
        ("\\(\\boxed{1}\\) and \\(\\boxed{-2}\\).", "\\{-2, 1\\}", True),
        (
            "Answer: \\text{The midpoints form a regular hexagon}",
            "\\text{The midpoints form a regular hexagon}",
            True,
        ),
    ],
)
def test_answers_as_other_graders_suites_write_them(response, gold, correct):
    assert grade(response, gold).correct is correct


def test_a_multi_line_gold_is_read_whole():
    assert grade("\\boxed{4}", MATRIX_GOLD).reason == "wrong"


def test_a_later_different_box_still_wins_over_an_earlier_one():
    assert grade("\\boxed{1}. No wait: the answer is \\boxed{2}", "2").correct
    assert not grade("\\boxed{1}. No wait: the answer is \\boxed{2}", "1").correct


# --- POLICY: one test per decision --------------------------------------------------------------------

POLICY_CASES = {
    "thousands separators": [
        ("\\boxed{1,625}", "1625", True),
        ("\\boxed{32, 349}", "32349", False),
        ("\\boxed{10\\,000}", "10^4", True),  # a gold whose value is an integer
        ("\\boxed{10\\,001}", "10^4", False),
        ("\\boxed{1\\,000}", "\\frac{1}{2}", False),
    ],
    "scientific notation": [
        ("Answer: 1e3", "1000", True),
        ("Answer: 0.0025", "2.5e-3", True),
        ("Answer: $2.5e-3$", "0.0025", True),
        ("Answer: \\(7E6\\)", "7000000", True),
        ("\\boxed{1e3}", "3e", False),  # 3e is 3 times Euler's number
        ("\\boxed{3e}", "3e", True),
        ("\\boxed{1e3}", "e^{3}", False),
    ],
    "decimal commas": [("\\boxed{1000,99}", "1000.99", False)],
    "degrees": [("\\boxed{336^\\circ}", "336", True), ("\\boxed{336}", "336^\\circ", True)],
    "percent": [
        ("\\boxed{28\\%}", "28", True),
        ("Answer: 28%", "28\\%", True),
        ("\\boxed{0.28}", "28\\%", False),
    ],
    "units and words": [
        ("\\boxed{15\\mbox{ cm}^2}", "15", True),
        ("\\boxed{125\\textnormal{ miles}}", "125", True),
    ],
    "modular answers": [("\\boxed{9 \\bmod 11}", "9", True)],
    "multiple-choice letters": [
        ("\\boxed{\\text{(C)}}", "C", True),
        ("\\boxed{C}", "\\text{C}", True),
        ("\\boxed{B}", "C", False),
    ],
    "sets versus tuples": [("\\boxed{3, 1, 2}", "\\{1,2,3\\}", True), ("\\boxed{(3,1)}", "(1,3)", False)],
    "multiple boxes": [
        ("\\boxed{1} and \\boxed{2}", "\\{1,2\\}", True),
        ("\\boxed{3} and \\boxed{5}", "3", False),
        ("$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$", "(3, 3), (1, 1)", True),
        ("\\(y_1 = \\boxed{2x} \\) and \\( y_2 = \\boxed{3x} \\)", "y_1 = 2x, y_2 = 3x", True),
        ("\\boxed{1} papers and \\boxed{2} bins", "1, 2", True),
        ("\\boxed{3} was my first guess; actually \\boxed{5}", "5", True),
        ("\\boxed{1} no no no \\boxed{2}", "1, 2", False),
    ],
    "multi-part answers": [
        ("(a) \\boxed{3} (b) \\boxed{5}", "(a) 3 (b) 5", True),
        ("(a) \\boxed{5} (b) \\boxed{3}", "(a) 3 (b) 5", False),  # math-verify alone: 15ab = 15ab
        ("\\boxed{3, 5}", "(a) 3; (b) 5", True),
        ("\\boxed{5, 3}", "(a) 3; (b) 5", False),
        ("For part (a): \\boxed{12}. For part (b): \\boxed{7}.", "7, 12", True),  # an unlabelled gold: a set
        ("(i) \\boxed{2} (ii) \\boxed{\\frac{1}{2}}", "(i) 2 (ii) 0.5", True),
        ("(a) \\boxed{3} (b) \\boxed{5}", "3", False),
        ("(1) so $x = \\boxed{3}$. (2) Hence $\\boxed{42}$", "42", True),  # one answer: the last part
        ("\\boxed{p=7,q=2;p=5,q=2}", "p = 5, q = 2 \\quad \\text{and} \\quad p = 7, q = 2", True),
        ("\\boxed{p=5,q=3;p=7,q=2}", "p = 5, q = 2 \\quad \\text{and} \\quad p = 7, q = 2", False),
    ],
    "matrices": [
        (
            "\\boxed{\\begin{Bmatrix}1&2\\\\3&4\\end{Bmatrix}}",
            "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
            True,
        ),
        ("\\boxed{\\begin{smallmatrix}1&2\\end{smallmatrix}}", "\\begin{bmatrix}1&2\\end{bmatrix}", True),
        ("\\boxed{\\begin{pmatrix*}[r]1&-2\\end{pmatrix*}}", "\\begin{bmatrix}1&-2\\end{bmatrix}", True),
        ("\\boxed{\\begin{bmatrix}1\\\\[2pt]2\\end{bmatrix}}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", True),
        ("\\boxed{\\begin{Bmatrix}1&2\\end{Bmatrix}}", "\\begin{pmatrix}2&1\\end{pmatrix}", False),
        (
            "Answer: \\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}",
            "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
            True,
        ),
        (
            "Answer: \\begin{bmatrix}1&2\\\\4&3\\end{bmatrix}",
            "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
            False,
        ),
        ("\\boxed{\\begin{vmatrix}1&2\\\\3&4\\end{vmatrix}}", "-2", True),  # a determinant
        (
            "\\boxed{\\begin{vmatrix}1&2\\\\3&4\\end{vmatrix}}",
            "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
            False,
        ),
    ],
    "trailing backslashes": [
        ("\\boxed{5}", "5\\", True),
        ("\\boxed{6}", "5\\", False),
        ("\\boxed{\\frac{3}{4}}", "$\\frac{3}{4}\\\\$", True),
        ("Answer: 17", "17 \\\\", True),
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}", True),  # an escaped brace is kept
    ],
    "rounded decimal golds": [
        ("\\boxed{\\frac{100}{3}}", "33.3", True),
        ("\\boxed{\\frac{2}{3}}", "0.67", True),
        ("\\boxed{0.6667}", "0.67", True),
        ("\\boxed{0.7}", "0.67", False),
        ("\\boxed{0.33}", "\\frac{1}{3}", False),  # the precision is the gold's only
        ("\\boxed{27.04}", "27.0", False),  # AMC23's 27.0 is an integer
        (
            "\\boxed{\\begin{pmatrix}0.2902\\\\-0.1864\\end{pmatrix}}",
            "\\begin{pmatrix}0.29\\\\-0.186\\end{pmatrix}",
            True,
        ),
        ("\\boxed{(\\frac{1}{3}, 5]}", "(0.33, 5]", True),
        ("\\boxed{(\\frac{1}{3}, 5)}", "(0.33, 5]", False),  # an open end is not a closed one
        ("\\boxed{x = \\frac{2}{3}}", "x = 0.67", True),
    ],
    "long decimals": [
        ("\\boxed{0.6666667}", "\\frac{2}{3}", True),
        ("\\boxed{x = 0.6666667}", "x = \\frac{2}{3}", True),
        ("\\boxed{66666.67}", "\\frac{200000}{3}", True),
        ("\\boxed{0.666666}", "\\frac{2}{3}", False),  # truncated
        ("\\boxed{0.6667}", "\\frac{2}{3}", False),  # too few digits to set a precision
    ],
    "multi-line golds": [
        (
            "\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}",
            "\\begin{pmatrix}\n1 \\\\\n2\n\\end{pmatrix}",
            True,
        )
    ],
    "no anchor, no answer": [("The result is 204.", "204", False)],
    "overlong answers": [
        ("\\boxed{" + "0" * 990 + "7}", "7", True),
        ("\\boxed{" + "0" * 1000 + "7}", "7", False),
        ("\\boxed{" + "1+" * 600 + "1}", "1201", False),
    ],
}


def test_every_policy_has_a_test():
    assert set(POLICY_CASES) == set(POLICY)


@pytest.mark.parametrize(
    ("policy", "response", "gold", "correct"),
    [(policy, *case) for policy, cases in POLICY_CASES.items() for case in cases],
)
def test_policy(policy, response, gold, correct):
    assert grade(response, gold).correct is correct, POLICY[policy]


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("33\\,124\\,147", "33124147"),
        ("336^\\circ", "336"),
        ("1\n000", "1000"),
        ("\\frac{1}{2}", "\\frac{1}{2}"),
        ("1,000,000", "1000000"),
        ("(1, 000)", "(1, 000)"),
    ],
)
def test_normalise_answer(text, normalised):
    assert normalise_answer(text) == normalised


def test_separators_are_joined_only_for_integer_golds():
    assert normalise_answer("1 000", integer_gold=False) == "1 000"
    assert normalise_answer("1 000", integer_gold=True) == "1000"


@settings(deadline=None, max_examples=40)
@given(st.integers(1000, 10**9), st.sampled_from(["\\,", " ", "{,}", ",\\!", ","]))
def test_any_thousands_separator_reads_as_the_integer(n, separator):
    written = f"{n:,}".replace(",", separator)
    assert grade(f"\\boxed{{{written}}}", str(n)).correct
    assert not grade(f"\\boxed{{{written}}}", str(n + 1)).correct


def test_explain_shows_how_both_sides_were_read():
    verdict, reading = explain("Work.\nAnswer: $4\\sqrt{2}$", "4")
    assert verdict == Verdict(False, "4\\sqrt{2}", "wrong")
    assert reading.span == "$4\\sqrt{2}$" and reading.source == "line"
    assert reading.gold_parsed == "4" and reading.prediction_parsed == "4*sqrt(2)"
    verdict, reading = explain("no answer here", "4")
    assert verdict.reason == "no_answer" and reading.span is None


FORMS = ["Answer: {}", "Answer: ${}$", "Answer: \\({}\\)", "\\boxed{{{}}}", "So the final answer is ${}$."]


@settings(deadline=None, max_examples=60)
@given(
    st.integers(3, 999),  # 1^2 = 1 and 2! = 2 are right answers
    st.sampled_from(["\\sqrt{2}", "\\sqrt3", "\\pi", "^{2}", "^{10}", "x", "\\cdot 7", "/7", "!", "e"]),
    st.sampled_from(FORMS),
)
def test_a_number_followed_by_more_math_is_never_read_as_that_number(n, suffix, form):
    assert not grade(form.format(f"{n}{suffix}"), str(n)).correct
