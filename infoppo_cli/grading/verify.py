"""Equivalence: one normaliser for gold and prediction, math-verify's parse and verify, and the policy.

Every decision where the field differs is an entry of :data:`~infoppo_cli.grading.policy.POLICY`.

Every answer, gold or predicted, goes through :func:`normalise_answer` (from
:mod:`~infoppo_cli.grading.normalise`) before math-verify parses it, and data preparation stores golds
through it too (``infoppo_cli.data.dapo``), so that both sides of every comparison are written the same
way. math-verify is called as ``verify(gold, prediction)``, in that order
(its argument order matters: see its README).
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from typing import Any

from infoppo_cli.grading.extract import Extraction, extract
from infoppo_cli.grading.normalise import is_integer_answer, normalise_answer, scientific_as_decimal
from infoppo_cli.grading.parts import Parts, split_parts
from infoppo_cli.grading.rounding import rounded_equal

# --- math-verify --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _configs() -> tuple[list[Any], list[Any]]:
    """(LaTeX reader, plain-expression reader) for spans we have already extracted ourselves.

    The span is the answer, so no anchor is needed. The LaTeX normalisation is math-verify's default
    (units, malformed operators such as ``\\sqrt2`` and ``\\frac12``, nits), as lighteval uses it.
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig  # lazy: heavy, kept off start-up

    return [LatexExtractionConfig(boxed_match_priority=0)], [ExprExtractionConfig()]


@functools.lru_cache(maxsize=1)
def _sentence_configs() -> list[Any]:
    """For an ``Answer:`` line written as a sentence: math-verify's own anchored readers pick the answer
    out of it (its README's recommended prediction config, with no reading outside the anchor)."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig  # lazy: heavy, kept off start-up

    return [
        LatexExtractionConfig(boxed_match_priority=0, try_extract_without_anchor=False),
        ExprExtractionConfig(try_extract_without_anchor=False),
    ]


_PLAIN = re.compile(r"[-+]?(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)(?:\s*/\s*[-+]?\d+)?")


def latex_span(answer: str) -> str:
    """``answer`` written as math-verify's LaTeX reader expects: inside ``$…$`` unless already delimited."""
    stripped = answer.strip()
    if stripped.startswith(("$", "\\(", "\\[")) or "\\boxed" in stripped:
        return stripped
    return f"${stripped}$"


def _parse(text: str, plain: bool, inner_timeout: int | None) -> list[Any]:
    """math-verify's reading of a whole answer: a plain number by either reader, anything else by the
    LaTeX reader alone, so that no reader can stop at a leading number."""
    from math_verify import parse  # lazy: heavy, kept off start-up

    latex, expression = _configs()
    # LaTeX first even for a plain number: it reads the whole of one and is ~5x faster than the other.
    readers = [(latex, latex_span(text)), (expression, text)] if plain else [(latex, text)]
    for config, span in readers:
        parsed = parse(span, config, parsing_timeout=inner_timeout, raise_on_error=True)
        if parsed:
            return parsed
    return []


@functools.lru_cache(maxsize=4096)
def parse_gold(gold: str, inner_timeout: int | None) -> tuple[str, list[Any]]:
    """``(normalised gold, parsed)``, once per process (cached); parsed is ``[]`` when unreadable."""
    normalised = normalise_answer(gold)
    if not normalised:
        return normalised, []
    if _PLAIN.fullmatch(normalised):
        return normalised, _parse(normalised, True, inner_timeout)
    return normalised, _parse(latex_span(normalised), False, inner_timeout)


def parse_prediction(
    found: Extraction, integer_gold: bool, inner_timeout: int | None
) -> tuple[str, list[Any]]:
    """``(normalised span, parsed)`` for an extracted answer, read whole (never by its prefix).

    A plain number may be read by either of math-verify's readers; anything else by its LaTeX reader
    alone, delimiters kept. An ``Answer:`` line written as a sentence around delimited math (``Answer:
    the area is $4\\sqrt{2}$ cm``) is handed over as written, and math-verify's anchored readers pick
    the answer out of it.
    """
    normalised = normalise_answer(found.answer, integer_gold)
    if _PLAIN.fullmatch(normalised):
        return normalised, _parse(normalised, True, inner_timeout)
    if found.source != "box" and _has_prose(found.span):
        from math_verify import parse  # lazy: heavy, kept off start-up

        span = scientific_as_decimal(found.span)
        parsed = parse(
            "Final Answer: " + span, _sentence_configs(), parsing_timeout=inner_timeout, raise_on_error=True
        )
        return span, parsed  # "Final Answer:" is math-verify's anchor for "final answer … is X"
    return normalised, _parse(latex_span(normalised), False, inner_timeout)


_DELIMITED_MATH = re.compile(r"\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}")  # \begin{bmatrix} holds no words
_TEXT_GROUP = re.compile(r"\\text\{[^{}]*\}")
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")


def _has_prose(span: str) -> bool:
    """Whether an answer line is a sentence: a word around delimited math, or (with no delimited math)
    two words outside ``\\text{}``, as in "Jane started growing Sphere 3 hours ago"."""
    span = _ENVIRONMENT.sub(" ", span)
    outside_math = _DELIMITED_MATH.sub(" ", span)
    if outside_math != span:
        return len(re.findall(r"[A-Za-z]{3,}", outside_math)) >= 1
    return len(_WORD.findall(_TEXT_GROUP.sub(" ", span))) >= 2


def equivalent(gold: list[Any], prediction: list[Any], inner_timeout: int | None) -> bool:
    """math-verify's ``verify(gold, prediction)``; one failing pairing does not hide the others."""
    from math_verify import verify  # lazy: heavy, kept off start-up

    try:
        return bool(verify(gold, prediction, timeout_seconds=inner_timeout, raise_on_error=True))
    except Exception:
        return bool(verify(gold, prediction, timeout_seconds=inner_timeout, raise_on_error=False))


def shown(parsed: list[Any]) -> str:
    """How math-verify read an answer, for people: its first reading, or ``-`` when none."""
    return str(parsed[0]) if parsed else "-"


@dataclass(frozen=True)
class Reading:
    """How one (response, gold) pair was read: what ``infoppo grade`` shows."""

    span: str | None
    source: str | None
    gold_normalised: str
    gold_parsed: str
    prediction_normalised: str | None
    prediction_parsed: str | None


# --- verdicts -----------------------------------------------------------------------------------------

REASONS = ("correct", "wrong", "no_answer", "timeout", "error")
"""Every value :attr:`Verdict.reason` can take."""

MAX_ANSWER_CHARS = 1000
"""The longest answer math-verify is asked to read (see ``POLICY["overlong answers"]``)."""

DEFAULT_TIMEOUT = 10.0
"""Seconds one response may take to grade before it is marked ``timeout`` (the one hard deadline)."""


@dataclass(frozen=True)
class Verdict:
    """The grade of one response: ``reason`` is one of :data:`REASONS`."""

    correct: bool
    extracted: str | None
    reason: str


def inner_timeout_seconds(timeout: float) -> int:
    """math-verify's own (whole-second, signal-based) limit for each parse and verify call.

    A fifth of the hard deadline (at least 1 s): a runaway comparison is usually stopped by
    math-verify itself, which is cheaper than killing and restarting the worker.
    """
    return max(1, int(timeout / 5))


def read_pair(response: str, gold: str, inner_timeout: int | None) -> tuple[Verdict, Reading]:
    """Grade one pair and say how it was read (math-verify's ``TimeoutException`` becomes ``timeout``)."""
    from math_verify.errors import TimeoutException  # lazy: heavy, kept off start-up

    found = extract(response)
    gold_normalised, gold_shown = normalise_answer(gold), "-"
    reading = Reading(None, None, gold_normalised, gold_shown, None, None)
    if found is None:
        return Verdict(False, None, "no_answer"), reading
    reading = Reading(found.span, found.source, gold_normalised, gold_shown, None, None)
    try:
        gold_normalised, gold_parsed = parse_gold(str(gold), inner_timeout)
        reading = Reading(found.span, found.source, gold_normalised, shown(gold_parsed), None, None)
        if not gold_parsed:
            return Verdict(False, found.answer, "error"), reading
        if len(found.answer) > max(MAX_ANSWER_CHARS, 4 * len(gold_normalised)):
            return Verdict(False, found.answer, "wrong"), reading
        normalised, prediction = parse_prediction(found, _integer_gold(gold, gold_parsed), inner_timeout)
        reading = Reading(
            found.span, found.source, gold_normalised, shown(gold_parsed), normalised, shown(prediction)
        )
        correct = _matches(
            str(gold), gold_normalised, gold_parsed, found.answer, normalised, prediction, inner_timeout
        )
    except TimeoutException:
        return Verdict(False, found.answer, "timeout"), reading
    except Exception:
        return Verdict(False, found.answer, "error"), reading
    return Verdict(correct, found.answer, "correct" if correct else "wrong"), reading


def _matches(
    gold: str,
    gold_normalised: str,
    gold_parsed: list[Any],
    answer: str,
    normalised: str,
    prediction: list[Any],
    timeout: int | None,
) -> bool:
    """Whether the prediction (as written, normalised and parsed) matches the gold: labelled parts part by
    part, else math-verify on the whole, then decimals at their written precision, then parts that are
    lists as a set (see ``POLICY``)."""
    gold_parts = Parts((gold,), "single") if is_integer_answer(gold) else split_parts(gold_normalised)
    predicted_parts = split_parts(answer)
    if gold_parts.kind == "labelled" or predicted_parts.kind == "labelled":
        if len(gold_parts.items) >= 2 and len(gold_parts.items) == len(predicted_parts.items):
            return _parts_match(
                gold_parts.items, predicted_parts.items, gold_parts.kind == "labelled", timeout
            )
        if gold_parts.kind == "labelled":
            return False
        if len(gold_parts.items) == 1:  # one answer asked for: the last part, as the last box was before
            return _part_matches(gold, predicted_parts.items[-1], timeout)
    if prediction and equivalent(gold_parsed, prediction, timeout):
        return True
    if prediction and rounded_equal(gold_normalised, gold_parsed, prediction, normalised):
        return True
    grouped = "groups" in (gold_parts.kind, predicted_parts.kind)
    if grouped and len(gold_parts.items) >= 2 and len(gold_parts.items) == len(predicted_parts.items):
        return _parts_match(gold_parts.items, predicted_parts.items, False, timeout)
    return False


_MAX_PARTS = 8


def _parts_match(
    golds: tuple[str, ...], predictions: tuple[str, ...], ordered: bool, timeout: int | None
) -> bool:
    """Part by part: in order, or as a set (each gold part matched by a different predicted part)."""
    if ordered:
        return all(_part_matches(g, p, timeout) for g, p in zip(golds, predictions, strict=True))
    if len(golds) > _MAX_PARTS:
        return False
    known: dict[tuple[int, int], bool] = {}

    def pairs_up(gold_index: int, free: frozenset[int]) -> bool:
        if gold_index == len(golds):
            return True
        for index in sorted(free):
            if (gold_index, index) not in known:
                known[gold_index, index] = _part_matches(golds[gold_index], predictions[index], timeout)
            if known[gold_index, index] and pairs_up(gold_index + 1, free - {index}):
                return True
        return False

    return pairs_up(0, frozenset(range(len(predictions))))


def _part_matches(gold: str, predicted: str, timeout: int | None) -> bool:
    """One gold part against one predicted part, each read whole as a single answer."""
    from math_verify.errors import TimeoutException  # lazy: heavy, kept off start-up

    try:
        gold_normalised, gold_parsed = parse_gold(gold, timeout)
        normalised = normalise_answer(predicted, _integer_gold(gold, gold_parsed))
        plain = bool(_PLAIN.fullmatch(normalised))
        parsed = _parse(normalised if plain else latex_span(normalised), plain, timeout)
    except TimeoutException:
        raise
    except Exception:
        return False
    if not gold_parsed or not parsed:
        return False
    if equivalent(gold_parsed, parsed, timeout):
        return True
    return rounded_equal(gold_normalised, gold_parsed, parsed, normalised)


def _integer_gold(gold: str, gold_parsed: list[Any]) -> bool:
    """Whether the gold is an integer, written as one (``1,625``) or with a value that is one (``10^4``)."""
    value = next((item for item in gold_parsed if not isinstance(item, str)), None)
    integer_valued = getattr(value, "is_number", False) and getattr(value, "is_integer", False)
    return is_integer_answer(gold) or integer_valued is True


def grade_pair(response: str, gold: str, inner_timeout: int | None) -> Verdict:
    """The verdict of :func:`read_pair` alone."""
    return read_pair(response, gold, inner_timeout)[0]


def _inner_timeout_here() -> int | None:
    """math-verify's signal timeouts work on the main thread only; elsewhere nothing can bound the work."""
    on_main = threading.current_thread() is threading.main_thread()
    return inner_timeout_seconds(DEFAULT_TIMEOUT) if on_main else None


def grade(response: str, gold: str) -> Verdict:
    """Grade one response in this process (math-verify with the gold first).

    On the main thread math-verify's signal timeouts bound the work; on other threads they cannot be
    used, so nothing bounds it there: grade untrusted responses from threads with ``grade_many``.
    """
    return grade_pair(str(response), str(gold), _inner_timeout_here())


def explain(response: str, gold: str) -> tuple[Verdict, Reading]:
    """:func:`grade` with how the pair was read (``infoppo grade`` prints both)."""
    return read_pair(str(response), str(gold), _inner_timeout_here())
