"""Answers with several parts: how boxes join into one answer, and how an answer splits into its parts.

*Joining* (used by :mod:`~infoppo_cli.grading.extract`): two boxes belong to one final statement when the
text between them only connects them: commas, semicolons, "and"/"or", math delimiters, spacing, part
labels ("for part (a) and"), a name being assigned (``\\) and \\( y_2 =``), and at most one word right after
the earlier box ("\\boxed{1} papers and \\boxed{2} bins"). Any other word ("was wrong; actually", "no",
"but"), a full stop or a blank line makes the earlier box an earlier attempt.

*Splitting* (used by :mod:`~infoppo_cli.grading.verify`): an answer is

* ``labelled`` when it names its parts in order, ``(a) … (b) …`` (or ``(i)``, ``(1)``): compared part by
  part, in order, when the gold is labelled;
* ``groups`` when top-level semicolons or "and" separate parts that are lists themselves
  (``p=5,q=2;p=7,q=2``): compared as a set of parts;
* ``list`` when top-level commas separate it; ``single`` otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LETTERS = "abcdefgh"
_ROMANS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii")
_NUMBERS = tuple("123456789")
LABEL = re.compile(
    r"(?<![^\s,;.:*{}>$])(?:\\textbf\s*\{\s*|\*\*)?(?:[Pp]art\s*)?"
    r"\(\s*(?P<name>[a-h]|i{1,3}|iv|vi{0,3}|[1-9])\s*\)(?:\s*\}|\*\*)?\s*:?"
)
"""A part label: ``(a)``, ``(ii)``, ``(2)``, optionally bold or after "Part", optionally with a colon."""

# --- joining boxes ------------------------------------------------------------------------------------

_MAX_GAP = 120
_GAP_MARKUP = re.compile(
    r"\\(?:text|textbf|textit|textrm|mathrm|mbox|emph)\s*\{|[{}]|\$|\\[()\[\]]|\\q?quad\b|\\[,;:! ]|~|\*\*"
)
_GAP_TOKEN = re.compile(
    r"(?P<label>\(\s*(?:[a-h]|i{1,3}|iv|vi{0,3}|[1-9])\s*\))"
    r"|(?P<name>[A-Za-z](?:_\{?\w+\}?)?'*\s*=)"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<separator>[,;&])"
    r"|(?P<other>\S)"
)
_SEPARATOR_WORDS = frozenset({"and", "or"})
_CONNECTIVE_WORDS = frozenset({"for", "part", "parts", "respectively"})


def joinable(gap: str) -> bool:
    """Whether the text between two boxes only connects them (the module's docstring gives the rule)."""
    if len(gap) > _MAX_GAP or "\n\n" in gap:
        return False
    free_words, connected, tokens = 0, False, 0
    for token in _GAP_TOKEN.finditer(_GAP_MARKUP.sub(" ", gap)):
        tokens += 1
        kind, text = token.lastgroup, token.group().lower()
        if kind in ("label", "separator") or text in _SEPARATOR_WORDS:
            connected = True
        elif kind == "word" and text not in _CONNECTIVE_WORDS:
            if connected or free_words:  # one word (a unit, a noun) may follow the earlier box
                return False
            free_words += 1
        elif kind == "other":
            return False
    return connected or tokens == 0


def label_position(name: str) -> tuple[int, int]:
    """``(scheme, index)`` of a label's name: roman numerals (so ``i`` and ``v``), letters, digits."""
    for scheme, names in enumerate((_ROMANS, _LETTERS, _NUMBERS)):
        if name in names:
            return scheme, names.index(name)
    raise ValueError(name)


def label_run(labels: list[re.Match[str]]) -> list[re.Match[str]]:
    """The labels that end ``labels`` and count up from the first of their scheme, ``(a) (b) (c)``;
    ``[]`` unless there are at least two."""
    if not labels:
        return []
    run = [labels[-1]]
    scheme, index = label_position(labels[-1].group("name"))
    for label in reversed(labels[:-1]):
        if index == 0:
            break
        if label_position(label.group("name")) != (scheme, index - 1):
            return []
        run.append(label)
        index -= 1
    return run[::-1] if index == 0 and len(run) >= 2 else []


# --- splitting answers --------------------------------------------------------------------------------

_OPENERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("\\boxed{", "}"))
_GROUP_SEPARATOR = re.compile(
    r"\s*(?:;|(?:\\q?quad\s*)?\\text\s*\{\s*and\s*\}(?:\s*\\q?quad)?|\\q?quad\s+and\s+\\q?quad|\band\b)\s*"
)
_TRIM = " \t\n,;."


@dataclass(frozen=True)
class Parts:
    """An answer's parts and how they were written (``labelled``, ``groups``, ``list`` or ``single``)."""

    items: tuple[str, ...]
    kind: str


def split_parts(answer: str) -> Parts:
    """The parts of one answer, gold or predicted (see the module's docstring)."""
    text = _unwrapped(answer.strip())
    labelled = _labelled(text)
    if labelled:
        return Parts(labelled, "labelled")
    groups = _top_level_split(text, _GROUP_SEPARATOR)
    if len(groups) >= 2 and any(len(_top_level_split(group, re.compile(","))) >= 2 for group in groups):
        return Parts(groups, "groups")
    items = _top_level_split(text, re.compile(r"\s*,\s*"))
    return Parts(items, "list") if len(items) >= 2 else Parts((text,), "single")


def _labelled(text: str) -> tuple[str, ...]:
    """The parts of ``(a) 3; (b) 5``, in order, when the labels count up from the first; else ``()``."""
    depths = _depths(text)
    labels = [match for match in LABEL.finditer(text) if depths[match.start()] == 0]
    run = label_run(labels)
    if not run or text[: run[0].start()].strip(_TRIM):
        return ()
    ends = [label.start() for label in run[1:]] + [len(text)]
    parts = tuple(_trimmed(text[label.end() : end]) for label, end in zip(run, ends, strict=True))
    return parts if all(parts) else ()


def _trimmed(part: str) -> str:
    part = part.strip(_TRIM)
    for separator in ("and", "\\quad", "\\qquad"):
        part = part.removesuffix(separator).strip(_TRIM)
    return part


def _top_level_split(text: str, separator: re.Pattern[str]) -> tuple[str, ...]:
    """``text`` cut at each match of ``separator`` outside brackets and braces (empty pieces dropped)."""
    depths, pieces, start = _depths(text), [], 0
    for match in separator.finditer(text):
        if match.end() > match.start() and depths[match.start()] == 0:
            pieces.append(text[start : match.start()])
            start = match.end()
    pieces.append(text[start:])
    return tuple(piece.strip() for piece in pieces if piece.strip())


def _depths(text: str) -> list[int]:
    """How many brackets, parentheses and braces are open before each position (one pass; ``[0, 1)``
    closes what it opens, escaped braces count alike)."""
    depths, depth = [], 0
    for character in text:
        depths.append(depth)
        if character in "([{":
            depth += 1
        elif character in ")]}" and depth:
            depth -= 1
    depths.append(depth)
    return depths


def _unwrapped(text: str) -> str:
    """``text`` without one pair of ``$…$``, ``\\(…\\)``, ``\\[…\\]`` or ``\\boxed{…}`` around all of it."""
    for opener, closer in _OPENERS:
        if text.startswith(opener) and text.endswith(closer) and len(text) >= len(opener) + len(closer):
            inner = text[len(opener) : len(text) - len(closer)]
            if _closes_nothing(inner, opener):
                return inner.strip()
    return text


def _closes_nothing(inner: str, opener: str) -> bool:
    """Whether the wrapper's own delimiter never closes inside ``inner`` (so it wraps the whole text)."""
    if opener.startswith("$"):
        return "$" not in inner
    if opener == "\\boxed{":
        depth = 0
        for character in inner.replace("\\{", "").replace("\\}", ""):
            depth += {"{": 1, "}": -1}.get(character, 0)
            if depth < 0:
                return False
        return depth == 0
    return opener not in inner
