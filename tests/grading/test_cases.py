"""The case table (cases.jsonl): rows from math-verify's and lighteval's test suites and the five
benchmarks' answer formats, each citing its source; rows marked ``policy`` are decided against the suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infoppo_cli.grading import grade

_TABLE = Path(__file__).parent / "cases.jsonl"
CASES = [json.loads(line) for line in _TABLE.read_text(encoding="utf-8").splitlines() if line]
SUITES = ("huggingface/Math-Verify@", "huggingface/lighteval@", "data-and-eval.md")


def test_every_row_cites_its_source_and_the_table_covers_both_suites_and_the_benchmarks():
    assert len(CASES) >= 150
    for row in CASES:
        assert row["source"].startswith(SUITES), row
        assert "::test_" in row["source"] or row["source"].startswith("data-and-eval.md"), row
    for suite in SUITES:
        assert any(row["source"].startswith(suite) for row in CASES)
    for bench in ("AMC23", "AIME24", "AIME25", "AIME26", "BeyondAIME"):
        assert any(bench in row["source"] for row in CASES)


@pytest.mark.parametrize("row", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_case(row):
    verdict = grade(row["response"], row["gold"])
    assert verdict.correct is row["expected"], row


def test_agreement_with_the_suites_outside_policy_decisions_is_at_least_97_percent():
    independent = [row for row in CASES if "policy" not in row]
    agreeing = sum(grade(row["response"], row["gold"]).correct is row["expected"] for row in independent)
    assert agreeing / len(independent) >= 0.97
