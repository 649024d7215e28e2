"""The case table (cases.jsonl): rows from math-verify's and lighteval's test suites, from Minerva's
(lm-evaluation-harness) and Qwen2.5-Math's answer handling, and the five benchmarks' answer formats, each
citing the file and function it comes from; rows marked ``policy`` are decided against their source, or
are infoppo's own cases of a ``POLICY`` entry (source ``infoppo policy: <entry>``).

The agreement measured here is the share of the independent rows (those not marked ``policy``) on which
the grader gives the verdict the cited suite expects; ``benchmarks/bench_grading.py --cases`` prints it
with the share over every row and per tagged class of answers (``class``), each a class the grader once
got wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from infoppo_cli.grading import POLICY, grade

_TABLE = Path(__file__).parent / "cases.jsonl"
CASES = [json.loads(line) for line in _TABLE.read_text(encoding="utf-8").splitlines() if line]
SUITES = (
    "huggingface/Math-Verify@",
    "huggingface/lighteval@",
    "EleutherAI/lm-evaluation-harness@",
    "QwenLM/Qwen2.5-Math@",
    "data-and-eval.md",
)
OWN = "infoppo policy: "
CLASSES = (
    "matrices",
    "trailing backslash",
    "multi-part",
    "rounded decimal gold",
    "scientific notation",
    "power and value",
    "long decimal",
)
_CITED = re.compile(r"^\S+@[0-9a-f]{7} \S+\.py::\w+$")


def test_every_row_cites_its_source_and_the_table_covers_every_suite_and_the_benchmarks():
    assert len(CASES) >= 350
    for row in CASES:
        if row["source"].startswith(OWN):  # infoppo's own case: a POLICY entry, and marked so
            assert row["source"].removeprefix(OWN) in POLICY and "policy" in row, row
            continue
        assert row["source"].startswith(SUITES), row
        assert _CITED.match(row["source"]) or row["source"].startswith("data-and-eval.md"), row
    for suite in SUITES:
        assert any(row["source"].startswith(suite) for row in CASES)
    for bench in ("AMC23", "AIME24", "AIME25", "AIME26", "BeyondAIME"):
        assert any(bench in row["source"] for row in CASES)


def _param_at(index: int, row: dict) -> object:
    """A row the grader is known to get wrong is an expected failure, and a strict one: fixing it shows."""
    marks = [pytest.mark.xfail(strict=True, reason=row["known_miss"])] if "known_miss" in row else []
    return pytest.param(index, row, marks=marks)


@pytest.fixture(scope="module")
def graded() -> list[bool]:
    """The grader's verdict on every row, graded once for the per-row tests and the agreement count."""
    return [grade(row["response"], row["gold"]).correct for row in CASES]


@pytest.mark.parametrize(
    ("index", "row"),
    [_param_at(i, row) for i, row in enumerate(CASES)],
    ids=[f"{i}" for i in range(len(CASES))],
)
def test_case(graded, index, row):
    assert graded[index] is row["expected"], row


def test_agreement_with_the_suites_outside_policy_decisions_is_at_least_99_percent(graded):
    independent = [i for i, row in enumerate(CASES) if "policy" not in row]
    agreeing = sum(graded[i] is CASES[i]["expected"] for i in independent)
    assert agreeing / len(independent) >= 0.99


def test_each_tagged_class_has_cited_cases_from_the_suites_and_both_verdicts():
    for name in CLASSES:
        rows = [row for row in CASES if row.get("class") == name]
        cited = [row for row in rows if not row["source"].startswith(OWN)]
        assert len(cited) >= 2 and len(rows) >= 8, (name, len(cited), len(rows))
        assert {True, False} <= {row["expected"] for row in rows}, name  # each class has both verdicts
    assert {row["class"] for row in CASES if "class" in row} == set(CLASSES)
