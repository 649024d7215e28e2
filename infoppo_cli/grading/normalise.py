"""Answer text written one way, in one place: what is dropped or rewritten before math-verify reads an
answer, and the canonical text evaluation keeps its books in.

* :func:`normalise_answer`, the grader's normaliser for gold and prediction alike (each choice is an entry
  of :data:`~infoppo_cli.grading.policy.POLICY`). Separators, degrees, percent, units, currency and moduli
  are dropped; scientific notation (``2.5e-3``) is written as the decimal it names; matrix environments
  are written as ``pmatrix`` (math-verify reads ``pmatrix``, ``bmatrix``, ``matrix`` and ``array``
  alike, but not ``Bmatrix``, ``smallmatrix`` or the starred forms) and a stray trailing backslash is
  removed.
* :func:`normalise_gold`, the gold a benchmark stores, and :func:`vote_key`, the key an extracted answer
  votes under in maj@k. Neither decides correctness (grading normalises both sides with
  :func:`normalise_answer` and asks math-verify); they only make equal answers *look* equal: an integer is
  written one way (``025``, ``+25``, ``25.0`` → ``25``), so that a stored gold matches the same gold read
  again (``infoppo eval --resume`` compares them) and two spellings of one wrong answer share a vote.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

_INTEGER_WITH_SEPARATORS = re.compile(r"[-+]?\d{1,3}(?:(?:\\,|\\ |\\;|\\:|~|\{,\}|,\\!|\s+|,)\d{3})+")
_SEPARATOR = re.compile(r"\\,|\\ |\\;|\\:|~|\{,\}|,\\!|\s+|,")
_PLAIN_INTEGER = re.compile(r"[-+]?\d+(?:\.0*)?")
_DEGREE_MARK = r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree"
_DEGREES = re.compile(_DEGREE_MARK)
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
# A number in scientific notation, 1e3, 2.5e-3, 7E6: digits, e or E, an integer exponent, and nothing joined
# to it on either side (3e is 3·e, e^{2} is e squared, x1e3 and 0x1e3 are not numbers).
_SCIENTIFIC = re.compile(r"(?<![\w.^])((?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d{1,6})(?![\w.])")
_MAX_EXPANDED_EXPONENT = 50  # beyond it 1e400 is written 1\times10^{400}, never as 400 digits


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


def scientific_as_decimal(text: str) -> str:
    """Each number written in scientific notation as the decimal it names: ``1e3`` → ``1000``, ``2.5e-3`` →
    ``0.0025`` (the mantissa's places kept, ``2.50e-3`` → ``0.00250``); an exponent beyond 50 as
    ``m\\times10^{n}``. ``e`` anywhere else is left to math-verify, which reads it as Euler's number."""
    if "e" not in text and "E" not in text:
        return text
    return _SCIENTIFIC.sub(_as_decimal, text)


def _as_decimal(match: re.Match[str]) -> str:
    mantissa, exponent = re.split("[eE]", match.group(1))
    if abs(int(exponent)) > _MAX_EXPANDED_EXPONENT:
        return f"{mantissa}\\times10^{{{int(exponent)}}}"
    return format(Decimal(match.group(1)), "f")


def _strip_decoration(text: str) -> str:
    text = scientific_as_decimal(matrices_as_pmatrix(strip_trailing_backslashes(text)))
    text = _DEGREES.sub("", text).strip().replace("\\varnothing", "\\emptyset")
    text = _MODULUS.sub("", text).strip().replace("\\bmod", "\\mod")  # math-verify reads \mod only
    if "\\equiv" in text:
        text = _CONGRUENCE.sub("", text).strip()
    text = _PERCENT.sub("", text).strip()
    for _ in range(2):  # "5 \text{ square } \text{meters}"
        text = _TRAILING_UNIT.sub("", text).strip()
    text = _CURRENCY.sub("", text)
    return _LONE_DOLLAR.sub("", text) if text.count("$") == 1 else text


# --- canonical text for evaluation's bookkeeping ------------------------------------------------------

_WRAPPERS = (
    re.compile(r"^\$+(.*?)\$+$", re.S),
    re.compile(r"^\\\((.*)\\\)$", re.S),
    re.compile(r"^\\\[(.*)\\\]$", re.S),
    re.compile(r"^\\boxed\{(.*)\}$", re.S),
)
_TRAILING_DEGREES = re.compile(rf"\s*(?:{_DEGREE_MARK})\s*$")
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
        text = _canonical_text_once(text)
        if text == before:
            break
    return text


def _canonical_text_once(text: str) -> str:
    for wrapper in _WRAPPERS:
        match = wrapper.fullmatch(text)
        if match:
            text = match.group(1).strip()
    text = _TRAILING_DEGREES.sub("", strip_trailing_backslashes(text)).strip()
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
