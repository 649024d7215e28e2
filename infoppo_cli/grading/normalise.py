"""The one normaliser for gold and prediction alike: what is dropped or rewritten before math-verify reads
an answer (each choice is an entry of :data:`~infoppo_cli.grading.verify.POLICY`).

Separators, degrees, percent, units, currency and moduli are dropped; matrix environments are written as
``pmatrix`` (math-verify reads ``pmatrix``, ``bmatrix``, ``matrix`` and ``array`` alike, but not ``Bmatrix``,
``smallmatrix`` or the starred forms) and a stray trailing backslash is removed.
"""

from __future__ import annotations

import re

_INTEGER_WITH_SEPARATORS = re.compile(r"[-+]?\d{1,3}(?:(?:\\,|\\ |\\;|\\:|~|\{,\}|,\\!|\s+|,)\d{3})+")
_SEPARATOR = re.compile(r"\\,|\\ |\\;|\\:|~|\{,\}|,\\!|\s+|,")
_PLAIN_INTEGER = re.compile(r"[-+]?\d+(?:\.0*)?")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree")
_PERCENT = re.compile(r"(?<=[\d}\s])\s*(?:\\%|%|\\text\{\s*%\s*\})")
_MODULUS = re.compile(
    r"\s*(?:\\pmod\s*\{[^{}]*\}|\\pmod\s*\w+|\\bmod\s*\{?\w+\}?|\\mod\s*\{?\w+\}?|\(\s*(?:\\text\{)?\s*mod\b[^)]*\))\s*$"
)
_CONGRUENCE = re.compile(r"^.*\\equiv\s*")
_UNIT_WORDS = (
    r"(?:square\s+|cubic\s+)?(?:units?|dollars?|cents?|degrees?|cm|centimeters?|m|meters?|km|kilometers?|"
    r"inch(?:es)?|in|feet|foot|ft|yards?|miles?|mph|seconds?|sec|minutes?|min|hours?|hrs?|days?|weeks?|"
    r"months?|years?|ways?|people|students?|integers?|numbers?|points?|marbles?|coins?|pounds?|lbs?|kg|"
    r"grams?|g|liters?|ml|percent(?:age)?|pct)"
)
_SPACING = r"(?:\s|\\[,;:! ]|~)*"  # white space and LaTeX's spacing commands
_TRAILING_UNIT = re.compile(
    rf"(?<=[\d}}]){_SPACING}(?:\\(?:text|mathrm|textnormal|mbox|textrm|rm)\s*\{{\s*[A-Za-z][A-Za-z .]*\}}"
    rf"|(?<![A-Za-z]){_UNIT_WORDS}(?:\b\.?|(?=[²³])))(?:\s*\^\s*\{{?[23]\}}?|[²³])?\s*$",
    re.IGNORECASE,
)
_CURRENCY = re.compile(r"^(?:\\\$|[€£¥])\s*(?=\d)|(?<=\d)\s*[€£¥]$")
_LONE_DOLLAR = re.compile(r"^\$\s*(?=\d)|(?<=\d)\s*\$$")  # a currency sign, when no other $ pairs with it
# Every environment that writes a matrix between brackets (or none) is one matrix: vmatrix and Vmatrix are
# left alone, since |…| is a determinant. A starred form's alignment ([r]) and row spacing (\\[2pt]) go.
_MATRIX_BEGIN = re.compile(r"\\begin\s*\{\s*(?:p|b|B|small)?matrix(?:\*\s*\}\s*(?:\[\s*[lcr]\s*\])?|\s*\})")
_MATRIX_END = re.compile(r"\\end\s*\{\s*(?:p|b|B|small)?matrix\*?\s*\}")
_ROW_SPACING = re.compile(r"\\\\\s*\[\s*-?[\d.]+\s*(?:pt|em|ex|mm|cm|in)\s*\]|\\hline")
_CLOSING_DELIMITERS = ("$$", "$", "\\]", "\\)")


def is_integer_answer(text: str) -> bool:
    """Whether ``text`` (a gold answer) is an integer, possibly written with thousands separators."""
    stripped = _strip_decoration(_collapse(text).strip("$ "))
    return bool(_PLAIN_INTEGER.fullmatch(stripped) or _INTEGER_WITH_SEPARATORS.fullmatch(stripped))


def normalise_answer(text: str, integer_gold: bool | None = None) -> str:
    """The one normaliser for gold and prediction alike (every choice is in :data:`POLICY`).

    ``integer_gold`` turns on the thousands-separator rule; ``None`` decides it from ``text`` itself
    (for golds).
    """
    if integer_gold is None:
        integer_gold = is_integer_answer(text)
    normalised = _strip_decoration(_collapse(text))
    if integer_gold and _INTEGER_WITH_SEPARATORS.fullmatch(normalised):
        normalised = _SEPARATOR.sub("", normalised)
    return normalised


def _collapse(text: str) -> str:
    return " ".join(str(text).split())


def strip_trailing_backslashes(text: str) -> str:
    """``text`` without a stray backslash (or line break ``\\\\``) at its end, inside a closing ``$`` too:
    ``5\\`` and ``$5\\\\$`` are 5. An escaped closing brace (``\\{1,2\\}``) ends in a brace and is kept."""
    body, closer = text.rstrip(), ""
    for delimiter in _CLOSING_DELIMITERS:
        if body.endswith(delimiter) and len(body) > len(delimiter):
            body, closer = body[: -len(delimiter)].rstrip(), delimiter
            break
    if not body.endswith("\\"):
        return text
    while body.endswith("\\"):
        body = body[:-1].rstrip()
    return body + closer if body else ""


def matrices_as_pmatrix(text: str) -> str:
    """Every matrix environment written as ``pmatrix``, so that matrices compare by their entries."""
    if "matrix" not in text and "\\hline" not in text:
        return text
    text = _MATRIX_END.sub(r"\\end{pmatrix}", _MATRIX_BEGIN.sub(r"\\begin{pmatrix}", text))
    return _ROW_SPACING.sub(lambda match: "" if match.group() == "\\hline" else "\\\\", text)


def _strip_decoration(text: str) -> str:
    text = matrices_as_pmatrix(strip_trailing_backslashes(text))
    text = _DEGREES.sub("", text).strip().replace("\\varnothing", "\\emptyset")
    text = _MODULUS.sub("", text).strip().replace("\\bmod", "\\mod")  # math-verify reads \mod only
    if "\\equiv" in text:
        text = _CONGRUENCE.sub("", text).strip()
    text = _PERCENT.sub("", text).strip()
    for _ in range(2):  # "5 \text{ square } \text{meters}"
        text = _TRAILING_UNIT.sub("", text).strip()
    text = _CURRENCY.sub("", text)
    return _LONE_DOLLAR.sub("", text) if text.count("$") == 1 else text
