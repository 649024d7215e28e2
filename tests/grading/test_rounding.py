"""Decimals compared at the places they are written with: a gold's always, a prediction's from six significant
digits on."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import grade
from infoppo_cli.grading.rounding import MIN_SIGNIFICANT, rounded_places


@pytest.mark.parametrize(
    ("gold", "places"),
    [
        ("0.67", {Fraction(67, 100): 2}),
        ("33.3", {Fraction(333, 10): 1}),
        ("-0.186", {Fraction(186, 1000): 3}),
        ("(0.33, 0.5]", {Fraction(33, 100): 2, Fraction(1, 2): 1}),
        ("\\begin{pmatrix}0.29\\\\.5\\end{pmatrix}", {Fraction(29, 100): 2, Fraction(1, 2): 1}),
        ("27.0", {}),  # AMC23's integers stored as floats: not rounded decimals
        ("27", {}),
        ("1{,}000.5", {}),  # a thousands separator: never read as 000.5
        ("1,000.5", {}),
        ("x_1.5", {}),
        ("\\frac{2}{3}", {}),
    ],
)
def test_rounded_places(gold, places):
    assert rounded_places(gold) == places


def _rounded(value: Fraction, places: int) -> str:
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return str(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


@settings(max_examples=40, deadline=None)
@given(st.integers(-999, 999), st.sampled_from([3, 6, 7, 9, 11, 13]), st.integers(1, 6))
def test_an_exact_answer_matches_its_gold_rounded_at_any_places(p, q, places):
    value = Fraction(p, q)
    gold = _rounded(value, places)
    assume(gold.split(".")[1].strip("0"))  # a gold of zeros after the point is an integer
    assert grade(f"\\boxed{{\\frac{{{p}}}{{{q}}}}}", gold).correct
    one_unit_off = _rounded(Fraction(Decimal(gold)) + Fraction(1, 10**places), places)
    assert not grade(f"\\boxed{{{one_unit_off}}}", gold).correct  # as precise as the gold, and different
    if Fraction(Decimal(gold)) != value:  # a rounded prediction against an exact gold sets the precision
        significant = len(gold.lstrip("-").replace(".", "").lstrip("0"))  # only with six digits or more,
        sets_precision = significant >= MIN_SIGNIFICANT or places >= 6  # or math-verify's 6 places hold
        assert grade(f"\\boxed{{{gold}}}", f"\\frac{{{p}}}{{{q}}}").correct is sets_precision


@settings(max_examples=30, deadline=None)
@given(st.integers(-(10**4), 10**4), st.integers(1, 49))
def test_an_integer_written_with_a_zero_decimal_is_never_rounded(n, hundredths):
    assert grade(f"\\boxed{{{n}}}", f"{n}.0").correct
    assert not grade(f"\\boxed{{{n}.{hundredths:02d}}}", f"{n}.0").correct


@pytest.mark.parametrize(
    ("response", "gold", "correct"),
    [
        ("\\boxed{\\sqrt{2}}", "1.414", True),
        ("\\boxed{\\sqrt{2}}", "1.415", False),
        ("\\boxed{\\pi}", "3.14", True),
        ("\\boxed{\\{\\frac{1}{3}, \\frac{2}{3}\\}}", "\\{0.67, 0.33\\}", True),  # a set, element to element
        ("\\boxed{\\{\\frac{1}{3}, \\frac{1}{3}+1\\}}", "\\{0.33, 0.67\\}", False),
        ("\\boxed{(\\frac{2}{3}, 1)}", "(0.67, 1)", True),
        ("\\boxed{(\\frac{2}{3}, 2)}", "(0.67, 1)", False),  # a leaf that is not rounded must be equal
        (
            "\\boxed{\\begin{pmatrix}\\frac{1}{3} & 1\\end{pmatrix}}",
            "\\begin{pmatrix}0.33\\\\1\\end{pmatrix}",
            False,
        ),
        ("\\boxed{x}", "0.67", False),  # not a number
        ("\\boxed{y = \\frac{2}{3}}", "x = 0.67", False),  # another unknown
    ],
)
def test_structures_with_rounded_decimals(response, gold, correct):
    assert grade(response, gold).correct is correct


@pytest.mark.parametrize(
    ("response", "gold", "correct"),
    [
        ("\\boxed{0.6666667}", "\\frac{2}{3}", True),
        ("\\boxed{x = 0.6666667}", "x = \\frac{2}{3}", True),  # math-verify compares equations exactly
        ("\\boxed{66666.67}", "\\frac{200000}{3}", True),  # seven digits, two places
        ("\\boxed{142.7143}", "\\frac{999}{7}", True),
        ("\\boxed{-0.4285714}", "-\\frac{3}{7}", True),
        ("\\boxed{(0.6, 2.666667]}", "(\\frac{3}{5}, \\frac{8}{3}]", True),
        (
            "\\boxed{\\begin{pmatrix}0.3333333\\\\66666.67\\end{pmatrix}}",
            "\\begin{pmatrix}\\frac{1}{3}\\\\\\frac{200000}{3}\\end{pmatrix}",
            True,
        ),
        ("\\boxed{66666.66}", "\\frac{200000}{3}", False),  # not the gold rounded
        ("\\boxed{0.666666}", "\\frac{2}{3}", False),  # truncated, not rounded
        ("\\boxed{0.66667}", "\\frac{2}{3}", False),  # five digits set no precision
        ("\\boxed{(0.6, 2.6667]}", "(\\frac{3}{5}, \\frac{8}{3}]", False),
        ("\\boxed{26.9999999}", "27", False),  # an integer gold is never a long decimal's rounding
        ("\\boxed{y = 0.6666667}", "x = \\frac{2}{3}", False),
    ],
)
def test_a_long_predicted_decimal_is_the_exact_gold_rounded_at_its_places(response, gold, correct):
    assert grade(response, gold).correct is correct


def test_a_prediction_sets_its_precision_from_six_significant_digits():
    assert rounded_places("66666.67 and 0.66667", MIN_SIGNIFICANT) == {Fraction(6666667, 100): 2}
    assert rounded_places("0.0006666667", MIN_SIGNIFICANT) == {Fraction(6666667, 10**10): 10}


def _significant(value: Fraction, digits: int) -> Decimal:
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return exact.quantize(Decimal(1).scaleb(exact.adjusted() - digits + 1), rounding=ROUND_HALF_EVEN)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 10**6), st.sampled_from([3, 7, 9, 11, 13, 17]), st.integers(6, 9))
def test_an_exact_gold_matches_its_rounding_to_six_significant_digits_or_more(p, q, digits):
    rounded = _significant(Fraction(p, q), digits)
    places = -rounded.as_tuple().exponent
    assume(places >= 1 and Fraction(rounded) != Fraction(p, q))
    assert grade(f"\\boxed{{{rounded}}}", f"\\frac{{{p}}}{{{q}}}").correct
    if places <= 5:  # beyond, math-verify's own 6 places cannot tell one unit of the last place
        one_unit_off = rounded + Decimal(1).scaleb(-places)
        assert not grade(f"\\boxed{{{one_unit_off}}}", f"\\frac{{{p}}}{{{q}}}").correct
