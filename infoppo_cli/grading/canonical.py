"""Canonical answer text for evaluation's bookkeeping: the gold answer a benchmark stores
(:func:`normalise_gold`) and the key an extracted answer votes under in maj@k (:func:`vote_key`).

Neither decides correctness: grading normalises both sides with
:func:`~infoppo_cli.grading.verify.normalise_answer` and asks math-verify. These only make equal answers
*look* equal: an integer is written one way (``025``, ``+25``, ``25.0`` → ``25``), so that a stored gold
matches the same gold read again (``infoppo eval --resume`` compares them) and two spellings of one
wrong answer share a vote.
"""

from __future__ import annotations

import math
import re

from infoppo_cli.grading.normalise import strip_trailing_backslashes

_WRAPPERS = (
    re.compile(r"^\$+(.*?)\$+$", re.S),
    re.compile(r"^\\\((.*)\\\)$", re.S),
    re.compile(r"^\\\[(.*)\\\]$", re.S),
    re.compile(r"^\\boxed\{(.*)\}$", re.S),
)
_DEGREES = re.compile(r"\s*(\^\s*\{?\s*\\circ\s*\}?|°|\\degree)\s*$")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+")
_INTEGER_VALUED_DECIMAL = re.compile(r"([+-]?\d+)\.0*")
_INTEGER = re.compile(r"[+-]?\d+")


def _integer(text: str) -> str:
    """An integer written one way (no sign for a positive one, no leading zeros); other text as is."""
    return str(int(text)) if _INTEGER.fullmatch(text) else text


def normalise_gold(answer: object) -> str:
    """A gold answer as a canonical string: ``27.0`` → ``27``, ``025`` → ``25``, ``336^\\circ`` → ``336``.

    Numbers become integers when they are integer-valued; ``$…$``, ``\\boxed{…}``, degree marks,
    thousands separators and a stray trailing backslash (``5\\``) are removed. Anything else
    (``\\frac{109}{33}``, ``2.5``) is kept as written, for math-verify to compare. ``None`` becomes
    ``""``, and so does a non-finite number (JSON's ``NaN`` or ``Infinity``): not an answer, so every
    reader refuses the row alike.
    """
    if answer is None:
        return ""
    if hasattr(answer, "item") and not isinstance(answer, (str, bytes)):
        answer = answer.item()  # numpy / pyarrow scalars
    if isinstance(answer, bool):
        return str(answer)
    if isinstance(answer, int):
        return str(answer)
    if isinstance(answer, float):
        if not math.isfinite(answer):
            return ""
        if answer.is_integer():
            return str(int(answer))
        return repr(answer)
    text = str(answer).strip()
    for _ in range(8):  # peel nested wrappers until nothing changes
        before = text
        text = _normalise_text_once(text)
        if text == before:
            break
    return text


def _normalise_text_once(text: str) -> str:
    for wrapper in _WRAPPERS:
        match = wrapper.fullmatch(text)
        if match:
            text = match.group(1).strip()
    text = _DEGREES.sub("", strip_trailing_backslashes(text)).strip()
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    match = _INTEGER_VALUED_DECIMAL.fullmatch(text)
    if match:
        text = match.group(1)
    return _integer(text)


def vote_key(extracted: str) -> str:
    """The key under which an extracted answer votes in maj@k: white space, ``$`` and a trailing period
    dropped, ``\\dfrac``/``\\tfrac`` read as ``\\frac``, and an integer (commas allowed) written one way."""
    text = re.sub(r"\s+", "", extracted).strip("$").rstrip(".")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("{,}", "")
    digits = text.replace(",", "")
    return _integer(digits) if _INTEGER.fullmatch(digits) else text
