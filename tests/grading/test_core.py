"""The shared grader: anchored extraction, math-verify verdicts, and the process pool's hard deadlines."""

from __future__ import annotations

import os
import signal
import threading
import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import (
    REASONS,
    GradingPool,
    Verdict,
    extract_answer,
    final_text,
    grade,
    grade_many,
    inner_timeout_seconds,
)

PATHOLOGICAL = "So the result is \\boxed{9^{9^{9}}}."  # math-verify's comparison runs for seconds


# --- extraction ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("so the answer is \\boxed{540}.", "540"),
        ("First \\boxed{100} was wrong; actually \\boxed{721}", "721"),  # two boxes on one line
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),  # nested braces
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),  # escaped braces do not close the box
        ("\\boxed {42}", "42"),
        ("\\fbox{42}", "42"),
        ("Step 1 ...\n\nAnswer: 540", "540"),
        ("**Answer:** 540", "540"),
        ("Answer: $540$.", "540"),
        ("answer:\n  12", "12"),
        ("Answer: \\boxed{7}", "7"),
        ("\\boxed{5}, then checked.\nAnswer: 7", "7"),  # the later marker wins
        ("Answer: 7\nLet me box it: \\boxed{5}", "5"),
        ("Answer: 540<|im_end|>", "540"),
        ("<think>maybe \\boxed{3}</think>The answer is \\boxed{5}", "5"),
    ],
)
def test_extract_answer(response, answer):
    assert extract_answer(response) == answer


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 204.",  # no anchor: never read a bare number
        "... 204 - ... I am still thinking and the answer is",  # truncated
        "First \\boxed{12} then the final \\boxed{13",  # the last box was cut off mid-answer
        "Answer: 3, or rather \\boxed{4",
        "\\boxed{}",
        "<think>I think \\boxed{3} but let me check",  # reasoning never finished
        "",
    ],
)
def test_extract_answer_finds_nothing(response):
    assert extract_answer(response) is None


def test_final_text_strips_special_tokens_and_reasoning():
    assert final_text("<think>a</think>b<|endoftext|>") == "b"
    assert final_text("<think>unfinished") is None
    assert final_text("plain</s>") == "plain"


_prose = st.text(alphabet=st.characters(blacklist_characters="\\:{}<>|$*"), max_size=200)


@given(_prose, st.integers(-(10**6), 10**6))
def test_extraction_reads_only_the_final_marker(text, n):
    assert extract_answer(text) is None
    assert extract_answer(f"{text}\n\\boxed{{{n}}}") == str(n)
    assert extract_answer(f"{text}\nAnswer: {n}") == str(n)
    assert extract_answer(f"\\boxed{{{n + 1}}} {text} \\boxed{{{n}}}") == str(n)


# --- verdicts -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("Answer: 0.5", "\\frac{1}{2}"),  # fraction gold, decimal answer
        ("\\boxed{\\frac{2}{4}}", "0.5"),
        ("\\boxed{073}", "73"),  # leading zeros on either side
        ("Answer: 25", "025"),
        ("\\boxed{27}", "27.0"),  # AMC23's float golds
        ("\\boxed{336^\\circ}", "336"),  # degrees
        ("\\boxed{1625 \\text{ square centimeters}}", "1625"),  # units
        ("\\boxed{1,625}", "1625"),
        ("First \\boxed{100} was wrong; actually \\boxed{721}", "721"),
        ("**Answer:** $\\sqrt{2}$", "\\sqrt{2}"),
        ("\\boxed{(x+1)^2}", "x^2+2x+1"),
        ("\\boxed{(1,\\infty)}", "x>1"),  # verify(gold, prediction): this order holds, the other does not
    ],
)
def test_correct_answers(response, gold):
    verdict = grade(response, gold)
    assert verdict.correct and verdict.reason == "correct"
    assert verdict.extracted == extract_answer(response)


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("\\boxed{0.6}", "\\frac{1}{2}"),
        ("Answer: 74", "73"),
        ("\\boxed{x>1}", "(1,\\infty)"),
        ("\\boxed{\\text{no idea}}", "5"),
        ("\\boxed{3} and \\boxed{5}", "3"),
    ],
)
def test_wrong_answers(response, gold):
    verdict = grade(response, gold)
    assert not verdict.correct and verdict.reason == "wrong" and verdict.extracted is not None


def test_no_answer_and_truncation_are_not_credited():
    assert grade("... 204 - ... I am still thinking and the answer is", "204") == Verdict(
        False, None, "no_answer"
    )
    assert grade("We get \\boxed{20", "204") == Verdict(False, None, "no_answer")


def test_unparseable_gold_is_an_error_not_a_wrong_answer():
    assert grade("\\boxed{5}", "") == Verdict(False, "5", "error")


def test_pathological_answer_times_out_in_process():
    started = time.monotonic()
    verdict = grade(PATHOLOGICAL, "540")
    assert verdict == Verdict(False, "9^{9^{9}}", "timeout")
    assert time.monotonic() - started < 3 * inner_timeout_seconds(10.0) + 2


def test_grade_works_off_the_main_thread():
    found: list[Verdict] = []
    worker = threading.Thread(target=lambda: found.append(grade("Answer: 073", "73")))
    worker.start()
    worker.join(timeout=30)
    assert found == [Verdict(True, "073", "correct")]


@settings(deadline=None)  # math-verify's first call imports and warms up
@given(st.integers(-(10**9), 10**9))
def test_integer_answers(n):
    assert grade(f"\\boxed{{{n}}}", str(n)).correct
    assert grade(f"Answer: {n}", f"{float(n)}").correct
    assert not grade(f"\\boxed{{{n + 1}}}", str(n)).correct


@settings(max_examples=60, deadline=None)
@given(st.integers(-999, 999), st.sampled_from([2, 4, 5, 8, 10, 16, 20, 25, 40, 50]))
def test_fractions_against_decimals(p, q):
    value = Fraction(p, q)
    decimal = f"{float(value):.6f}".rstrip("0").rstrip(".")
    assert grade(f"\\boxed{{\\frac{{{p}}}{{{q}}}}}", decimal).correct
    assert grade(f"Answer: {decimal}", f"\\frac{{{p}}}{{{q}}}").correct
    assert not grade(f"Answer: {float(value) + 0.25}", f"\\frac{{{p}}}{{{q}}}").correct


# --- the process pool ---------------------------------------------------------------------------------

MIXED = [
    ("so \\boxed{540}", "540"),
    ("Answer: 073", "73"),
    ("The answer is 204.", "204"),
    ("\\boxed{\\frac{2}{4}}", "\\frac{1}{2}"),
    ("Answer: 7", "8"),
    ("We get \\boxed{20", "204"),
    ("First \\boxed{100} was wrong; actually \\boxed{721}", "721"),
    ("\\boxed{336^\\circ}", "336"),
]


@pytest.fixture(scope="module")
def pool():
    with GradingPool(workers=2, timeout=10.0) as shared:
        shared.start()
        yield shared


def test_pool_matches_in_process_grading_in_input_order(pool):
    pairs = MIXED * 5
    assert pool.grade(pairs) == [grade(*pair) for pair in pairs]


def test_on_done_counts_every_input_pair_including_repeats(pool):
    done: list[int] = []
    pairs = MIXED * 3 + [MIXED[0]] * 4
    pool.grade(pairs, on_done=done.append)
    assert sum(done) == len(pairs)
    assert sorted(done) == [3] * 7 + [7]  # each distinct pair is graded once and reports all its copies


def test_grade_many_from_a_thread_with_a_pathological_item():
    results: list[list[Verdict]] = []
    pairs = [*MIXED, ("Answer: 5", "5"), (PATHOLOGICAL, "540"), *MIXED]

    def run():
        results.append(grade_many(pairs, workers=2, timeout=2.0))

    started = time.monotonic()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert results, "grade_many stalled"
    verdicts = results[0]
    assert verdicts[len(MIXED) + 1].reason == "timeout" and not verdicts[len(MIXED) + 1].correct
    expected = [grade(*pair) for pair in MIXED]
    assert verdicts[: len(MIXED)] == expected and verdicts[len(MIXED) + 2 :] == expected
    assert time.monotonic() - started < 20


def test_hard_deadline_kills_and_replaces_a_worker_that_overruns():
    # math-verify's own limit is a whole second, so a 0.4 s deadline must be enforced by the parent.
    with GradingPool(workers=1, timeout=0.4) as small:
        small.start()
        before = small.worker_pids()
        verdicts = small.grade([(PATHOLOGICAL, "540"), ("Answer: 5", "5"), (PATHOLOGICAL, "541")])
        after = small.worker_pids()
    assert verdicts == [
        Verdict(False, None, "timeout"),
        Verdict(True, "5", "correct"),
        Verdict(False, None, "timeout"),
    ]
    assert len(after) == 1 and after != before


def test_a_worker_killed_mid_run_is_replaced_and_its_item_retried(pool):
    pairs = [(f"\\boxed{{{i}}}", str(i)) for i in range(300)]
    victims = pool.worker_pids()

    def kill_one(_: int) -> None:
        if victims:
            os.kill(victims.pop(), signal.SIGKILL)

    verdicts = pool.grade(pairs, on_done=kill_one)
    assert all(v == Verdict(True, str(i), "correct") for i, v in enumerate(verdicts))
    assert len(pool.worker_pids()) == 2


def test_a_worker_that_died_while_idle_is_replaced(pool):
    os.kill(pool.worker_pids()[0], signal.SIGKILL)
    time.sleep(0.2)
    assert pool.grade(MIXED) == [grade(*pair) for pair in MIXED]


def test_concurrent_callers_share_the_pool(pool):
    results: dict[int, list[Verdict]] = {}

    def call(k: int) -> None:
        results[k] = pool.grade([(f"Answer: {k * 100 + i}", str(k * 100 + i)) for i in range(20)])

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == [0, 1, 2, 3]
    assert all(v.correct for verdicts in results.values() for v in verdicts)


def test_grade_many_edge_cases():
    assert grade_many([]) == []
    assert all(v.reason in REASONS for v in grade_many(MIXED, workers=1))
    with pytest.raises(ValueError, match="timeout must be positive"):
        GradingPool(timeout=0)
