"""Re-grading a samples file: every step, reading included, runs in the workers under the deadline; what
is shown of it is bounded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.grading import explain
from infoppo_cli.grading.review import JSON_CHARS, bounded, cut_text, read_samples, review_samples

pytestmark = pytest.mark.usefixtures("shared_grading_workers")  # warm workers, shared by the session

PATHOLOGICAL = "So the result is \\boxed{9^{9^{9}}}."  # math-verify's comparison runs for seconds


def _write(tmp_path, rows):
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_cases_carry_the_workers_readings_and_the_stored_verdicts(tmp_path):
    rows = read_samples(
        _write(
            tmp_path,
            [
                {
                    "response": "Work.\nAnswer: $4\\sqrt{2}$",
                    "gold": "4",
                    "correct": True,
                    "reason": "correct",
                },
                {"response": "\\boxed{336^\\circ}", "gold": "336"},
                {"response": "\\boxed{" * 5000, "gold": "7"},
            ],
        )
    )
    review = review_samples(rows, workers=1)
    for case, row in zip(review.cases, rows, strict=True):
        verdict, reading = explain(row["response"], row["gold"])
        assert (case.correct, case.reason, case.extracted) == (
            verdict.correct,
            verdict.reason,
            verdict.extracted,
        )
        assert (case.span, case.source, case.gold_normalised) == (
            reading.span,
            reading.source,
            reading.gold_normalised,
        )
    assert review.cases[0].changed and review.changed == 1
    assert review.reasons == {"correct": 1, "wrong": 1, "no_answer": 1, "timeout": 0, "error": 0}


def test_nothing_is_read_in_the_parent(tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("read in the parent process")

    modules = ("infoppo_cli.grading.extract", "infoppo_cli.grading.verify", "infoppo_cli.grading.review")
    for module in modules:
        for name in ("extract", "normalise_answer", "read_pair", "grade_pair"):
            monkeypatch.setattr(f"{module}.{name}", refuse, raising=False)
    rows = read_samples(_write(tmp_path, [{"response": "\\boxed{540}", "gold": "540"}]))
    [case] = review_samples(rows, workers=1).cases
    assert case.correct and case.span == "\\boxed{540}" and case.gold_normalised == "540"


@pytest.mark.slow
def test_a_sample_past_the_deadline_is_a_timeout_without_a_reading(tmp_path):
    rows = read_samples(_write(tmp_path, [{"response": PATHOLOGICAL, "gold": "540"}]))
    [case] = review_samples(rows, workers=1, timeout=0.5).cases
    assert (case.reason, case.span, case.source, case.gold_normalised) == ("timeout", None, None, None)


def test_a_file_without_samples_is_refused(tmp_path):
    with pytest.raises(UsageError, match="holds no samples"):
        read_samples(_write(tmp_path, []))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300), st.integers(2, 100))
def test_cut_text_keeps_a_short_text_whole_and_both_ends_of_a_long_one(text, limit):
    shown = cut_text(text, limit)
    if len(text) <= limit:
        assert shown == text
        return
    half = limit // 2
    assert shown == f"{text[:half]} … {text[len(text) - half :]}"
    assert len(shown) <= limit + 3


def test_bounded_cuts_every_long_text_and_names_it_by_its_path():
    data = {"span": "x" * 30, "ok": "short", "cases": [{"gold": "y" * 40, "n": 3}, None], "flag": True}
    shown, cut = bounded(data, 10)
    assert cut == {"span": 30, "cases.0.gold": 40}
    assert shown == {
        "span": "xxxxx … xxxxx",
        "ok": "short",
        "cases": [{"gold": "yyyyy … yyyyy", "n": 3}, None],
        "flag": True,
    }


def test_a_review_as_json_is_bounded_and_says_what_it_cut(tmp_path):
    huge = "Answer: " + "1" * (3 * JSON_CHARS)
    rows = read_samples(
        _write(tmp_path, [{"response": huge, "gold": "7"}, {"response": "\\boxed{7}", "gold": "7"}])
    )
    data = review_samples(rows, workers=1).to_json(None)
    assert data["cut"] == {"cases.0.span": 3 * JSON_CHARS, "cases.0.extracted": 3 * JSON_CHARS}
    assert [case["reason"] for case in data["cases"]] == ["wrong", "correct"]  # graded on the whole text
    assert len(json.dumps(data)) < 3 * JSON_CHARS
