"""Decimals compared at the precision they are written in.

A gold ``0.67`` stands for every number that rounds to it at two places, so ``\\frac{2}{3}`` and
``0.6667`` match it and ``0.7`` does not; ``33.3`` is matched by ``\\frac{100}{3}``. A prediction sets the
precision only when written with at least six significant digits (:data:`MIN_SIGNIFICANT`, math-verify's
six places counted from the first nonzero digit): ``0.6666667`` and ``66666.67`` are the exact golds
``\\frac{2}{3}`` and ``\\frac{200000}{3}`` rounded at their places, while ``0.3`` or ``0.6667`` set no
precision and must be equal. A decimal whose places are all zeros (AMC23's ``27.0``) is an integer,
compared exactly.

The rule runs only after math-verify has said no, and walks both readings together: a number, each entry
of a matrix, tuple or interval (whose ends must also be open or closed alike), a set matched element to
element, and the right-hand side of an equation ``x = 0.67``. Each decimal leaf of the gold takes the
places written for it, else a long decimal leaf of the prediction its own; every other leaf must be equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

_DECIMAL = re.compile(r"(?<![\w.,])(?<!\{,\})(\d*)\.(\d+)(?![\d.])")
_MAX_SET = 8  # a set is matched element to element by trying pairings; more than this is never a rounded gold
_DIGITS = 30  # places sympy evaluates each side to
_SAME = Fraction(1, 10**12)  # relative tolerance for leaves that are not rounded decimals
MIN_SIGNIFICANT = 6
"""The fewest significant digits with which a predicted decimal sets its own precision."""


def rounded_places(text: str, min_significant: int = 1) -> dict[Fraction, int]:
    """Each rounded decimal written in ``text`` (as a positive value) with at least ``min_significant``
    significant digits, and its number of decimal places."""
    places: dict[Fraction, int] = {}
    for match in _DECIMAL.finditer(text):
        whole, decimals = match.groups()
        if decimals.strip("0") and len((whole + decimals).lstrip("0")) >= min_significant:
            value = Fraction(f"{whole or '0'}.{decimals}")
            places[value] = max(places.get(value, 0), len(decimals))
    return places


@dataclass(frozen=True)
class _Written:
    """The places written for the gold's decimals, and for the prediction's long ones."""

    gold: dict[Fraction, int]
    prediction: dict[Fraction, int]


def rounded_equal(gold_text: str, gold: list[Any], prediction: list[Any], prediction_text: str = "") -> bool:
    """Whether the prediction matches the gold at the precision its decimals are written with (a gold's
    rounded decimals, or a prediction's decimals of :data:`MIN_SIGNIFICANT` digits or more)."""
    places = _Written(rounded_places(gold_text), rounded_places(prediction_text, MIN_SIGNIFICANT))
    if not places.gold and not places.prediction:
        return False
    golds = [item for item in gold if not isinstance(item, str)]
    predictions = [item for item in prediction if not isinstance(item, str)]
    return any(_match(g, p, places) for g in golds[:1] for p in predictions[:1])


def _match(gold: Any, prediction: Any, places: _Written) -> bool:
    from sympy import Eq, FiniteSet, Interval, Tuple  # lazy: heavy, kept off start-up
    from sympy.matrices import MatrixBase  # lazy: heavy, kept off start-up

    if isinstance(gold, Eq) and isinstance(prediction, Eq):
        return gold.lhs == prediction.lhs and _match(gold.rhs, prediction.rhs, places)
    if isinstance(gold, Eq) and gold.lhs.is_Symbol:
        return _match(gold.rhs, prediction, places)
    if isinstance(prediction, Eq) and prediction.lhs.is_Symbol:
        return _match(gold, prediction.rhs, places)
    if isinstance(gold, MatrixBase) or isinstance(prediction, MatrixBase):
        return (
            isinstance(gold, MatrixBase)
            and isinstance(prediction, MatrixBase)
            and gold.shape == prediction.shape
            and all(_match(g, p, places) for g, p in zip(gold, prediction, strict=True))
        )
    if isinstance(gold, Interval) or isinstance(prediction, Interval):
        return (
            isinstance(gold, Interval)
            and isinstance(prediction, Interval)
            and (gold.left_open, gold.right_open) == (prediction.left_open, prediction.right_open)
            and _match(gold.start, prediction.start, places)
            and _match(gold.end, prediction.end, places)
        )
    if isinstance(gold, (Tuple, tuple, list)) or isinstance(prediction, (Tuple, tuple, list)):
        return (
            type(gold) is type(prediction)
            and len(gold) == len(prediction)
            and all(_match(g, p, places) for g, p in zip(gold, prediction, strict=True))
        )
    if isinstance(gold, FiniteSet) or isinstance(prediction, FiniteSet):
        if not (isinstance(gold, FiniteSet) and isinstance(prediction, FiniteSet)):
            return False
        if len(gold) != len(prediction) or len(gold) > _MAX_SET:
            return False
        return _pairs_up(list(gold.args), list(prediction.args), places)
    return _numbers_match(gold, prediction, places)


def _pairs_up(golds: list[Any], predictions: list[Any], places: _Written) -> bool:
    """Whether each gold element matches a different prediction element (tried depth first)."""
    if not golds:
        return True
    first, rest = golds[0], golds[1:]
    for index, prediction in enumerate(predictions):
        others = predictions[:index] + predictions[index + 1 :]
        if _match(first, prediction, places) and _pairs_up(rest, others, places):
            return True
    return False


def _numbers_match(gold: Any, prediction: Any, places: _Written) -> bool:
    """A gold number against a predicted one: within half a unit of the gold's last written place when
    the gold is a rounded decimal, else of the prediction's when it is a long decimal; equal otherwise."""
    gold_value, predicted = _real(gold), _real(prediction)
    if gold_value is None or predicted is None:
        return False
    for value, other, written_places in (
        (gold_value, predicted, places.gold),
        (predicted, gold_value, places.prediction),
    ):
        written = _places_of(abs(value), written_places)
        if written is not None:
            decimal, count = written
            return abs(decimal * (1 if value >= 0 else -1) - other) <= Fraction(1, 2 * 10**count)
    return abs(gold_value - predicted) <= _SAME * max(1, abs(gold_value))


def _places_of(value: Fraction, places: dict[Fraction, int]) -> tuple[Fraction, int] | None:
    """The decimal written in the gold for ``value`` (read back from sympy's float) and its places."""
    for decimal, count in places.items():
        if abs(decimal - value) <= _SAME * max(1, decimal):
            return decimal, count
    return None


def _real(expression: Any) -> Fraction | None:
    """A finite real number as an exact fraction of its value to 30 places, or ``None``."""
    from sympy import Expr, Float, Rational  # lazy: heavy, kept off start-up

    if not isinstance(expression, Expr) or not expression.is_number:
        return None
    value = expression.evalf(_DIGITS)
    if isinstance(value, Rational):
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, Float) and value.is_finite:
        return Fraction(str(value))
    return None
