"""The grading guide's rule table (docs/grading.md) shows what the grader does: each row is graded again
here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infoppo_cli.grading import explain

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "grading.md"


def _rows() -> list[tuple[str, str, str, str]]:
    section = GUIDE.read_text(encoding="utf-8").split("\n## ", 1)[0]  # the table is in the opening part
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) == 5 and cells[1].startswith("`"):
            response, gold, span = (re.sub(r"^`|`$", "", cell).replace("⏎", "\n") for cell in cells[1:4])
            rows.append((response, gold, None if span == "—" else span, cells[4]))
    return rows


def test_the_table_has_one_row_per_rule():
    assert len(_rows()) >= 8


@pytest.mark.parametrize(("response", "gold", "span", "verdict"), _rows())
def test_each_rule_row_is_what_the_grader_does(response, gold, span, verdict):
    result, reading = explain(response, gold)
    assert reading.span == span
    assert ("correct" if result.correct else result.reason) == verdict
