"""Equivalence: one normaliser for gold and prediction, math-verify's parse and verify, and the policy.

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
from infoppo_cli.grading.normalise import is_integer_answer, normalise_answer
from infoppo_cli.grading.parts import Parts, split_parts
from infoppo_cli.grading.rounding import rounded_equal

POLICY: dict[str, str] = {
    "thousands separators": (
        "When the gold is an integer, digit groups of three separated by a thin space (\\,), a space, ~, "
        "{,} or ,\\! are one number (33\\,124\\,147 = 33124147). A plain comma followed by three digits is "
        "a separator as math-verify reads it (1,625 = 1625); a comma followed by a space separates a list."
    ),
    "decimal commas": (
        "Not accepted: 1000,99 is the list {1000, 99}, never 1000.99, because in a competition answer a "
        "comma separates values; a comma followed by exactly three digits is read as math-verify's LaTeX "
        "reader reads it (1,625 = 1625; 0,111 = 0.111). math-verify's test suite accepts 1000,99 = 1000.99."
    ),
    "degrees": "^\\circ, ^{\\circ} and ° are dropped from both sides (AIME25's gold 336^\\circ = 336).",
    "percent": (
        "\\%, %, percent and pct after a number are dropped from both sides: 28\\% = 28, as AIME-style "
        "answers mean it, and 0.28 is not 28\\%."
    ),
    "units and words": (
        "After a number, \\text{…}, \\mathrm{…}, \\mbox{…} (with an optional ^2 or ^3) and common unit words "
        "(dollars, cm, m², square units, ways …) are dropped from both sides, as DAPO's normaliser does; so "
        "are currency signs ($, \\$, €, £, ¥) around a number."
    ),
    "modular answers": "A trailing \\pmod{m}, \\bmod m or (mod m) is dropped: 9 \\pmod{11} = 9.",
    "multiple-choice letters": (
        "Letters compare as symbols after math-verify's normalisation: (C), \\text{C} and C are equal."
    ),
    "sets versus tuples": (
        "As math-verify: a list written without brackets (1, 2, 3 or several adjacent boxes) is a set and "
        "matches the gold set in any order; a tuple (1,3) is ordered and a set {1,3} equals it only when "
        "written in the same order."
    ),
    "multiple boxes": (
        "Boxes of one final statement are joined into a list: only commas, semicolons, and/or, delimiters, "
        "part labels ('for part (a) and'), a name assigned (y_2 =) and one word after a box ('papers and') "
        "between them. A box separated from the last by any other text ('was wrong; actually', a full "
        "stop) is an earlier attempt and is ignored (see infoppo_cli.grading.parts)."
    ),
    "multi-part answers": (
        "Parts labelled (a), (b) … (or (i), (1)), in boxes or in one answer, are compared part by part: in "
        "order when the gold labels its parts (never as math-verify's product a*3*b*5), as a set when the "
        "gold is an unlabelled list; a gold of one part is compared with the last part. Parts that are "
        "lists themselves, separated by ; or 'and' (p=5,q=2;p=7,q=2), are compared as a set of parts."
    ),
    "matrices": (
        "Matrix environments compare by content: pmatrix, bmatrix, Bmatrix, matrix, smallmatrix, array and "
        "the starred forms are one matrix, row spacing (\\\\[2pt]) and \\hline dropped; vmatrix and "
        "Vmatrix are determinants, read as numbers."
    ),
    "trailing backslashes": (
        "A stray backslash or line break (\\\\) at the end of an answer is dropped, inside a closing $ too: "
        "a gold 5\\ is 5 (before, every response to it was an error)."
    ),
    "rounded decimal golds": (
        "A gold decimal stands for every number that rounds to it at the places it is written with: "
        "100/3 matches 33.3, 2/3 and 0.6667 match 0.67, 0.7 does not; entries of matrices, tuples, "
        "intervals and sets alike. The precision is the gold's only: 0.33 does not match a gold 1/3 "
        "(math-verify's own comparison at 6 places still holds), and a decimal of zeros (27.0) is an integer."
    ),
    "multi-line golds": "Line breaks are white space: a gold matrix over several lines is read whole.",
    "no anchor, no answer": (
        "Only a box, an Answer: line or 'final answer is' is read; a bare number in the text is never taken."
    ),
    "overlong answers": (
        "An answer longer than 1,000 characters (or four times the gold, when that is longer) is wrong "
        "without being parsed: no competition answer is written so (verl's math_dapo reads only a "
        "response's last 300 characters for the same reason), and math-verify can take seconds on such "
        "text, a collapsing policy's output."
    ),
}
"""Every grading decision where the field differs, in one place (tests/grading/test_verify.py tests each)."""


# --- math-verify --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _configs() -> tuple[list[Any], list[Any]]:
    """(LaTeX reader, plain-expression reader) for spans we have already extracted ourselves.

    The span is the answer, so no anchor is needed. The LaTeX normalisation is math-verify's default
    (units, malformed operators such as ``\\sqrt2`` and ``\\frac12``, nits), as lighteval uses it.
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    return [LatexExtractionConfig(boxed_match_priority=0)], [ExprExtractionConfig()]


@functools.lru_cache(maxsize=1)
def _sentence_configs() -> list[Any]:
    """For an ``Answer:`` line written as a sentence: math-verify's own anchored readers pick the answer
    out of it (its README's recommended prediction config, with no reading outside the anchor)."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

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
    from math_verify import parse

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
        from math_verify import parse

        sentence = "Final Answer: " + found.span  # the anchor of math-verify's "final answer … is X"
        parsed = parse(sentence, _sentence_configs(), parsing_timeout=inner_timeout, raise_on_error=True)
        return found.span, parsed
    return normalised, _parse(latex_span(normalised), False, inner_timeout)


_DELIMITED_MATH = re.compile(r"\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_TEXT_GROUP = re.compile(r"\\text\{[^{}]*\}")
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")


def _has_prose(span: str) -> bool:
    """Whether an answer line is a sentence: a word around delimited math, or (with no delimited math)
    two words outside ``\\text{}``, as in "Jane started growing Sphere 3 hours ago"."""
    outside_math = _DELIMITED_MATH.sub(" ", span)
    if outside_math != span:
        return len(re.findall(r"[A-Za-z]{3,}", outside_math)) >= 1
    return len(_WORD.findall(_TEXT_GROUP.sub(" ", span))) >= 2


def equivalent(gold: list[Any], prediction: list[Any], inner_timeout: int | None) -> bool:
    """math-verify's ``verify(gold, prediction)``; one failing pairing does not hide the others."""
    from math_verify import verify

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
    from math_verify.errors import TimeoutException

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
        normalised, prediction = parse_prediction(found, is_integer_answer(gold), inner_timeout)
        reading = Reading(
            found.span, found.source, gold_normalised, shown(gold_parsed), normalised, shown(prediction)
        )
        correct = _matches(str(gold), gold_normalised, gold_parsed, found.answer, prediction, inner_timeout)
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
    prediction: list[Any],
    timeout: int | None,
) -> bool:
    """Whether the prediction matches the gold: labelled parts part by part, else math-verify on the whole,
    then a rounded decimal gold at its precision, then parts that are lists as a set (see ``POLICY``)."""
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
    if prediction and rounded_equal(gold_normalised, gold_parsed, prediction):
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
    from math_verify.errors import TimeoutException

    try:
        gold_normalised, gold_parsed = parse_gold(gold, timeout)
        normalised = normalise_answer(predicted, is_integer_answer(gold))
        plain = bool(_PLAIN.fullmatch(normalised))
        parsed = _parse(normalised if plain else latex_span(normalised), plain, timeout)
    except TimeoutException:
        raise
    except Exception:
        return False
    if not gold_parsed or not parsed:
        return False
    return equivalent(gold_parsed, parsed, timeout) or rounded_equal(gold_normalised, gold_parsed, parsed)


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
