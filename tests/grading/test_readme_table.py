"""The README's grading rule table shows what the grader does: each row is graded again here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infoppo_cli.grading import explain

README = Path(__file__).resolve().parents[2] / "README.md"


def _rows() -> list[tuple[str, str, str, str]]:
    section = README.read_text(encoding="utf-8").split("\n## Grading\n", 1)[1].split("\n## ", 1)[0]
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
def test_readme_row(response, gold, span, verdict):
    result, reading = explain(response, gold)
    assert reading.span == span
    assert ("correct" if result.correct else result.reason) == verdict
