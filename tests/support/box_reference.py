"""The box finder the grader had before it became linear: the reference the extractor's tests compare
against, and the "before" that ``benchmarks/bench_grading_degenerate.py`` times."""

from __future__ import annotations

import re


def rescanning_boxes(text: str) -> list[tuple[int, int, str | None]]:
    """The previous box finder: a scan from every opening to its closing brace, then a containment
    filter over all pairs of boxes (quadratic in the number of boxes)."""
    boxes = []
    for opening in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, index, closed = 1, opening.end(), None
        while index < len(text):
            if text[index] == "\\":
                index += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                closed = index
                break
            index += 1
        end = len(text) if closed is None else closed + 1
        boxes.append((opening.start(), end, None if closed is None else text[opening.end() : closed]))
    return [box for box in boxes if not any(o[0] < box[0] < o[1] for o in boxes if o is not box)]
