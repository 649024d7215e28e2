"""The state of one evaluation run: the gold answer of each problem it evaluates."""

from __future__ import annotations

from infoppo_cli.eval.benchmarks import Problem
from infoppo_cli.eval.run_state import EvalRun, no_progress
from infoppo_cli.eval.sample_store import SampleStore
from infoppo_cli.eval.settings import EvalSettings


def test_a_run_knows_the_gold_answer_of_its_problems_only(tmp_path) -> None:
    problems = {"mine": [Problem("mine", "p1", "1+1?", "2")], "other": [Problem("other", "p1", "2+2?", "4")]}
    run = EvalRun(EvalSettings(model="m/x"), tmp_path, problems, SampleStore(tmp_path))
    assert run.gold("mine", "p1") == "2" and run.gold("other", "p1") == "4"
    assert run.gold("mine", "p2") is None and run.gold("absent", "p1") is None
    assert run.progress is no_progress and no_progress("grading", 3)(1) is None
