"""Finding the final answer in a response: the span that math-verify will read, and nothing else.

The rules, in order (the README's "Grading" section shows one example of each):

1. Only the final text counts: special tokens are dropped, and with a ``<think>`` block only the text after
   the last ``</think>``; an unclosed ``<think>`` holds no answer.
2. The last ``\\boxed{}`` / ``\\fbox{}`` (brace-balanced; ``\\{`` does not close it). Boxes written next to it
   in one final statement (``\\boxed{1}, \\boxed{2} and \\boxed{3}``, ``\\boxed{(3, 3)} \\text{ for part (a)
   and } \\boxed{(1, 1)}``: only connecting text between them, see
   :func:`~infoppo_cli.grading.parts.joinable`) are joined into one list, as math-verify's own tests
   expect; a box separated from the last one by any other text is an earlier attempt and is ignored.
   Boxes under part labels counting up to the last box (``(a) … \\boxed{3} … (b) … \\boxed{5}``) are one
   answer with labelled parts, ``(a) 3; (b) 5``.
3. DAPO's last ``Answer:`` line (DAPO's prompt asks for it; verl's ``math_dapo.py`` reads the same line).
   An empty line after ``Answer:`` is followed to the next non-empty line, and display math opened on it
   (``\\[`` or ``$$``) is followed onto the next lines until it closes. Minerva's form of the line,
   ``Final Answer: The final answer is X. I hope it is correct.``, gives ``X``.
   Between a box and an ``Answer:`` line, the one written later wins.
4. Else the phrase "final answer is …" (lighteval's and math-verify's highest-priority anchor), up to the
   end of its line or "I hope it is correct".

A response with none of these has no answer: numbers elsewhere in the text are never taken as the answer.
The span keeps its LaTeX delimiters; :mod:`infoppo_cli.grading.verify` hands it to math-verify whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infoppo_cli.grading.parts import LABEL, joinable, label_run

# Special tokens that survive decoding with skip_special_tokens=False (ChatML, Llama 3, DeepSeek, </s>).
_SPECIAL_TOKEN = re.compile(r"<\|[^<>|\n]{1,64}\|>|<｜[^<>\n]{1,64}｜>|</s>")
_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BRACE_TOKEN = re.compile(r"\\[\\{}]|[{}]")  # an escaped brace or backslash is skipped whole
_ANSWER_LINE = re.compile(r"\banswer\s*:[ \t]*\**[ \t]*([^\n]*)", re.IGNORECASE)
_FINAL_PHRASE = re.compile(r"final answer is\s*:?[ \t]*([^\n]+)", re.IGNORECASE)
_HOPE = re.compile(r"I hope it is correct", re.IGNORECASE)
_DISPLAY_OPENERS = {"\\[": "\\]", "$$": "$$"}
_DELIMITED = re.compile(r"^(?:\$\$|\$|\\\(|\\\[)(.*?)(?:\$\$|\$|\\\)|\\\])$", re.S)


@dataclass(frozen=True)
class Extraction:
    """The final answer of a response.

    ``span`` is the text math-verify reads (delimiters kept); ``answer`` is the same answer without its
    delimiters and decoration, as shown to users and used for majority voting.
    """

    span: str
    answer: str
    source: str


def final_text(response: str) -> str | None:
    """The part of a response that may hold the final answer, or ``None`` when reasoning never ended."""
    text = _SPECIAL_TOKEN.sub("", response)
    if "</think>" in text:
        return text.rsplit("</think>", 1)[1]
    if "<think>" in text:
        return None
    return text


def extract(response: str) -> Extraction | None:
    """The final answer written in ``response`` by the rules above, or ``None``."""
    text = final_text(response)
    if text is None:
        return None
    box = _last_boxes(text)
    line = _last_answer_line(text)
    if box is not None and (line is None or box[0] > line[0]):
        found = box[1]
    elif line is not None:
        found = line[1]
    else:
        found = _final_phrase(text)
    if found is None:
        return None
    answer = found.answer if found.source == "box" else clean_answer(found.span)
    return Extraction(found.span, answer, found.source) if answer else None


def extract_answer(response: str) -> str | None:
    """The final answer of ``response`` without delimiters (see :func:`extract`), or ``None``."""
    found = extract(response)
    return found.answer if found else None


def clean_answer(span: str) -> str:
    """Drop markdown emphasis, a closing full stop and math delimiters around an answer."""
    text = span.strip().strip("*").strip().rstrip(".").rstrip()
    match = _DELIMITED.fullmatch(text)
    if match and not any(mark in match.group(1) for mark in ("$", "\\(", "\\[")):
        text = match.group(1).strip().rstrip(".").rstrip()
    return text


def _box_contents(text: str) -> list[tuple[int, int, str | None]]:
    """``(start, end, content)`` of every outermost box, content ``None`` when its braces never close.

    One pass over the braces counting depth, so linear in the text however many boxes are left open.
    ``\\{``, ``\\}`` and ``\\\\`` are escapes, not grouping; a box opened inside another is part
    of the outer one's content.
    """
    openings = {match.end() - 1: match.start() for match in _BOX_OPEN.finditer(text)}
    if not openings:
        return []
    boxes: list[tuple[int, int, str | None]] = []
    depth = 0
    outer: tuple[int, int] | None = None  # (depth outside it, position of its brace) of the open box
    for token in _BRACE_TOKEN.finditer(text):
        position = token.start()
        if token.group() == "{":
            if outer is None and position in openings:
                outer = (depth, position)
            depth += 1
        elif token.group() == "}" and depth > 0:
            depth -= 1
            if outer is not None and depth == outer[0]:
                brace = outer[1]
                boxes.append((openings[brace], position + 1, text[brace + 1 : position]))
                outer = None
    if outer is not None:
        boxes.append((openings[outer[1]], len(text), None))
    return boxes


def _last_boxes(text: str) -> tuple[int, Extraction | None] | None:
    """Start of the last box and its answer: its labelled parts, or it joined with the boxes adjacent to
    it (rule 2)."""
    boxes = _box_contents(text)
    if not boxes:
        return None
    start, _, content = boxes[-1]
    if content is None:  # the last box was never closed: the response was cut mid-answer
        return start, None
    labelled = _labelled_boxes(text, boxes)
    if labelled is not None:
        return labelled
    start, answer = _joined(text, boxes)
    return start, Extraction("\\boxed{" + answer + "}", answer, "box")


def _joined(text: str, boxes: list[tuple[int, int, str | None]]) -> tuple[int, str]:
    """Start and joined answer of the last of ``boxes`` and the boxes adjacent to it."""
    start, _, content = boxes[-1]
    joined = [content or ""]  # last first
    for previous in reversed(boxes[:-1]):
        if previous[2] is None or not joinable(text[previous[1] : start]):
            break
        joined.append(previous[2])
        start = previous[0]
    return start, ", ".join(part.strip() for part in reversed(joined))


def _labelled_boxes(text: str, boxes: list[tuple[int, int, str | None]]) -> tuple[int, Extraction] | None:
    """The parts under labels ``(a)``, ``(b)`` … that count up to the last box, each part its label's last
    box (joined with boxes adjacent to it), or ``None`` unless every label holds a box."""
    run = label_run([label for label in LABEL.finditer(text) if label.end() <= boxes[-1][0]])
    if not run:
        return None
    closed = [box for box in boxes if box[2] is not None]
    ends = [label.start() for label in run[1:]] + [len(text)]
    parts = []
    for label, end in zip(run, ends, strict=True):
        inside = [box for box in closed if label.end() <= box[0] and box[1] <= end]
        if not inside:
            return None
        parts.append(f"({label.group('name')}) {_joined(text, inside)[1]}")
    answer = "; ".join(parts)
    return run[0].start(), Extraction("\\boxed{" + answer + "}", answer, "box")


def _last_answer_line(text: str) -> tuple[int, Extraction] | None:
    last = None
    for last in _ANSWER_LINE.finditer(text):  # noqa: B007 - only the last match is wanted
        pass
    if last is None:
        return None
    rest = text[last.start(1) :]
    first_line = last.group(1).strip()
    if not first_line.strip("*"):  # "Answer:" alone on its line: the answer is on the next one
        rest = rest.lstrip().lstrip("*")
        first_line = rest.split("\n", 1)[0].strip()
    phrase = _FINAL_PHRASE.search(first_line)  # Minerva's "Final Answer: The final answer is 12."
    first_line = _before_hope(phrase.group(1) if phrase else first_line)
    if phrase is not None:
        return last.start(), Extraction(first_line, "", "line")
    return last.start(), Extraction(_follow_display_math(rest.lstrip(), first_line), "", "line")


def _follow_display_math(rest: str, first_line: str) -> str:
    """``first_line``, extended to the closing delimiter when it opens display math left unclosed."""
    for opener, closer in _DISPLAY_OPENERS.items():
        if first_line.startswith(opener) and closer not in first_line[len(opener) :]:
            end = rest.find(closer, len(opener))
            if end != -1:
                return rest[: end + len(closer)].strip()
    return first_line


def _final_phrase(text: str) -> Extraction | None:
    last = None
    for last in _FINAL_PHRASE.finditer(text):  # noqa: B007 - only the last match is wanted
        pass
    if last is None:
        return None
    return Extraction(_before_hope(last.group(1)), "", "phrase")


def _before_hope(text: str) -> str:
    """``text`` up to Minerva's closing "I hope it is correct" and the full stop before it."""
    hope = _HOPE.search(text)
    if hope is None:
        return text.strip()
    before = text[: hope.start()].rstrip()  # rstrip, not a regex: linear in any run of white space
    return before.removesuffix(".").strip()
