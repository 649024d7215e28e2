"""The teacher's responses: the right answer on DAPO's answer line grades correct with infoppo's grader
and earns the training reward; its slips grade wrong, at the rates its spec gives."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_config import run_config

from infoppo_cli.data.templates import render_prompt
from infoppo_cli.grading import grade
from infoppo_cli.tasks.arithmetic import Problem, train_row
from infoppo_cli.tasks.teacher import ANCHORED, TeacherSpec, expected_accuracy, teacher_response
from infoppo_cli.tasks.tokenizer import TURN_END

problems = st.builds(Problem, st.integers(0, 99), st.sampled_from(["+", "-"]), st.integers(0, 9)).filter(
    lambda p: p.answer >= 0
)


def correct_response(problem: Problem) -> str:
    """A response the grader marks correct: DAPO's answer line with the right answer."""
    return ANCHORED.format(problem.answer)


@settings(deadline=None)  # the first example imports the grader (math-verify, sympy): seconds
@given(problems)
def test_a_correct_response_grades_correct_against_the_stored_label(problem):
    label = train_row(problem)["label"]
    assert grade(correct_response(problem) + TURN_END, label).correct


@given(problems, st.integers(0, 2**32 - 1))
def test_a_teacher_without_slips_is_always_right(problem, seed):
    exact = TeacherSpec(wrong_rate=0.0, unanchored_rate=0.0)
    assert teacher_response(problem, exact, random.Random(seed)) == correct_response(problem)


@given(problems, st.integers(0, 2**32 - 1))
def test_slips_grade_wrong_and_never_give_a_negative_answer(problem, seed):
    rng = random.Random(seed)
    always_wrong = teacher_response(problem, TeacherSpec(wrong_rate=1.0, unanchored_rate=0.0), rng)
    assert not grade(always_wrong, str(problem.answer)).correct
    assert int(always_wrong.split()[-1]) >= 0
    unanchored = teacher_response(problem, TeacherSpec(wrong_rate=0.0, unanchored_rate=1.0), rng)
    verdict = grade(unanchored, str(problem.answer))
    assert not verdict.correct and verdict.extracted is None


def test_the_share_of_correct_responses_matches_the_spec():
    spec = TeacherSpec(wrong_rate=0.5, unanchored_rate=0.3)
    rng = random.Random(0)
    problem = Problem(37, "+", 8)
    responses = [teacher_response(problem, spec, rng) for _ in range(4000)]
    share = sum(response == correct_response(problem) for response in responses) / len(responses)
    assert expected_accuracy(spec) == pytest.approx(0.35)
    assert share == pytest.approx(0.35, abs=0.03)


@pytest.mark.slow  # the reward function starts its grading worker processes
def test_the_training_reward_scores_the_right_answer_one_and_a_slip_zero(tmp_path, monkeypatch):
    from infoppo_cli.openrlhf_adapter.reward_func import reward_func
    from infoppo_cli.openrlhf_adapter.settings import CONFIG_ENV

    monkeypatch.setenv(CONFIG_ENV, run_config(tmp_path, "infoppo"))  # a binary reward, as InfoPPO's run

    problem = Problem(58, "-", 9)
    row = train_row(problem)
    prompt = f"<|im_start|>user\n{row['prompt']}<|im_end|>\n<|im_start|>assistant\n"
    responses = [correct_response(problem), "Answer: 48", "The answer is 49"]
    queries = [prompt + response + TURN_END for response in responses]
    result = reward_func(queries, [prompt] * 3, [row["label"]] * 3)
    assert result["rewards"].tolist() == [1.0, 0.0, 0.0]
    assert result["extra_logs"]["answer_found"].tolist() == [1.0, 1.0, 0.0]
    assert render_prompt(problem.text) == row["prompt"]
