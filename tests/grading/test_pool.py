"""The grading pool: identical verdicts, hard per-response deadlines, replaced workers."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from infoppo_cli.grading import REASONS, GradingPool, Verdict, explain, explain_many, grade, grade_many

PATHOLOGICAL = "So the result is \\boxed{9^{9^{9}}}."  # math-verify's comparison runs for seconds

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


def test_explain_reads_each_pair_in_a_worker_as_explain_does_here(pool):
    pairs = [*MIXED, ("\\boxed{" * 5000, "7")]  # a collapsed policy's output: read in linear time
    assert pool.explain(pairs) == [explain(*pair) for pair in pairs]


def test_on_done_counts_every_input_pair_including_repeats(pool):
    done: list[int] = []
    pairs = MIXED * 3 + [MIXED[0]] * 4
    pool.grade(pairs, on_done=done.append)
    assert sum(done) == len(pairs)
    assert sorted(done) == [3] * 7 + [7]  # each distinct pair is graded once and reports all its copies


@pytest.mark.slow
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


def _live_workers(pool: GradingPool, count: int) -> list[int]:
    """The pool's worker pids once ``count`` are alive (a replacement starts a moment after a kill)."""
    for _ in range(200):
        pids = pool.worker_pids()
        if len(pids) == count:
            return pids
        time.sleep(0.05)
    return pool.worker_pids()


@pytest.mark.slow
def test_hard_deadline_kills_and_replaces_a_worker_that_overruns():
    # math-verify's own limit is a whole second, so a 0.4 s deadline must be enforced by the parent.
    with GradingPool(workers=1, timeout=0.4) as small:
        small.start()
        before = small.worker_pids()
        verdicts = small.grade([(PATHOLOGICAL, "540"), ("Answer: 5", "5"), (PATHOLOGICAL, "541")])
        after = _live_workers(small, 1)
    assert verdicts == [
        Verdict(False, None, "timeout"),
        Verdict(True, "5", "correct"),
        Verdict(False, None, "timeout"),
    ]
    assert len(after) == 1 and after != before


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_replaced_and_its_item_retried(pool):
    pairs = [(f"\\boxed{{{i}}}", str(i)) for i in range(300)]
    victims = pool.worker_pids()

    def kill_one(_: int) -> None:
        if victims:
            os.kill(victims.pop(), signal.SIGKILL)

    started = time.monotonic()
    verdicts = pool.grade(pairs, on_done=kill_one)
    elapsed = time.monotonic() - started
    assert all(v == Verdict(True, str(i), "correct") for i, v in enumerate(verdicts))
    assert len(_live_workers(pool, 2)) == 2
    # Both workers die mid-run: that costs their chunks' retries and two restarts, never a stall
    # past the deadline.
    assert elapsed < pool.timeout + 5, f"grading took {elapsed:.1f} s"


@pytest.mark.slow
def test_a_worker_that_died_while_idle_is_replaced(pool):
    os.kill(_live_workers(pool, 2)[0], signal.SIGKILL)
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
    assert grade_many([]) == [] and explain_many([]) == []
    assert all(v.reason in REASONS for v in grade_many(MIXED, workers=1))
    with pytest.raises(ValueError, match="timeout must be positive"):
        GradingPool(timeout=0)


@pytest.mark.slow
def test_a_chunk_that_overran_is_retried_one_response_at_a_time():
    # 40 responses in chunks of 5 on two workers; the runaway one must not take its chunk-mates with it.
    pairs = [(f"Answer: {i}", str(i)) for i in range(39)] + [(PATHOLOGICAL, "540")]
    verdicts = grade_many(pairs, workers=2, timeout=0.5)
    assert verdicts[:39] == [Verdict(True, str(i), "correct") for i in range(39)]
    assert verdicts[39] == Verdict(False, None, "timeout")


@pytest.mark.slow
def test_explain_many_has_no_reading_where_the_deadline_decided():
    outcomes = explain_many([("Answer: 5", "5"), (PATHOLOGICAL, "540")], workers=1, timeout=0.5)
    assert outcomes[0] == explain("Answer: 5", "5")
    assert outcomes[1] == (Verdict(False, None, "timeout"), None)
