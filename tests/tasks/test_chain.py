"""The long-horizon chain task: problems within bounds, worked solutions of ~200 tokens that grade
correct when exact and wrong after a slip, disjoint and seed-determined splits."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.data.templates import DAPO_PREFIX, DAPO_SUFFIX
from infoppo_cli.errors import UsageError
from infoppo_cli.grading import grade
from infoppo_cli.tasks.arithmetic import train_row
from infoppo_cli.tasks.chain import HIGH, LOW, ChainSpec, ChainTeacherSpec, ShortcutTeacherSpec, draw_problem
from infoppo_cli.tasks.tokenizer import TURN_END, train_tokenizer

seeds = st.integers(0, 2**32 - 1)


@given(seeds, st.integers(1, 15))
def test_the_running_total_stays_in_bounds_and_the_answer_is_the_last_total(seed, steps):
    problem = draw_problem(steps, random.Random(seed))
    assert len(problem.operations) == steps
    assert all(LOW <= total <= HIGH for total in problem.totals)
    assert problem.answer == problem.totals[-1]
    assert all(1 <= operand <= 9 for _, operand in problem.operations)


@settings(max_examples=50, deadline=None)  # the first grade imports math-verify
@given(seeds)
def test_an_exact_solution_grades_correct_and_shows_every_step(seed):
    problem = draw_problem(10, random.Random(seed))
    solution = ChainTeacherSpec().respond(problem, random.Random(seed), exact=True)
    assert grade(solution + TURN_END, train_row(problem)["label"]).correct
    lines = solution.splitlines()
    assert len(lines) == 10 + 3 and lines[-1] == f"Answer: {problem.answer}"
    for line, total in zip(lines[1:11], problem.totals, strict=True):
        assert line.endswith(f" {total}")


def _steps(solution: str) -> list[tuple[int, str, int, int]]:
    """``(left, sign, operand, written result)`` of each step line."""
    found = []
    for line in solution.splitlines()[1:-2]:
        left, sign, operand, _, result = line.split(": ", 1)[1].split()
        found.append((int(left), sign, int(operand), int(result)))
    return found


@settings(max_examples=50, deadline=None)
@given(seeds)
def test_every_line_carries_on_from_the_line_above_so_one_slip_makes_the_answer_wrong(seed):
    problem, rng = draw_problem(10, random.Random(seed)), random.Random(seed)
    solution = ChainTeacherSpec(slip_rate=0.1).respond(problem, rng)
    steps = _steps(solution)
    assert steps[0][0] == problem.start
    assert all(later[0] == earlier[3] for earlier, later in zip(steps, steps[1:], strict=False))
    slips = [s for s in steps if s[3] != (s[0] + s[2] if s[1] == "+" else s[0] - s[2])]
    assert all(abs(s[3] - (s[0] + s[2] if s[1] == "+" else s[0] - s[2])) <= 2 for s in slips)
    if len(slips) == 1:
        assert not grade(solution, str(problem.answer)).correct
    if not slips:
        assert grade(solution, str(problem.answer)).correct


def test_the_teacher_is_right_as_often_as_its_spec_says():
    teacher, rng = ChainTeacherSpec(slip_rate=0.06), random.Random(3)
    problems = [draw_problem(10, rng) for _ in range(3000)]
    right = sum(grade(teacher.respond(p, rng), str(p.answer)).correct for p in problems) / len(problems)
    slip_free = 0.94**10
    # slips that cancel (+1 then -1) also end right: a little more than the slip-free share
    assert slip_free < teacher.expected_accuracy(10) < slip_free + 0.05
    assert right == pytest.approx(teacher.expected_accuracy(10), abs=0.02)  # 3000 draws: sd 0.009


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 1000))
def test_splits_are_disjoint_sized_and_determined_by_the_seed(seed):
    spec = ChainSpec(train_size=300, heldout_size=50, seed=seed)
    train, heldout = spec.split()
    assert len(train) == 300 and len(heldout) == 50
    assert not {p.text for p in train} & {p.text for p in heldout}
    assert len({p.id for p in train + heldout}) == 350
    assert spec.split() == (train, heldout)
    assert ChainSpec(train_size=300, heldout_size=50, seed=seed + 1).split()[1] != heldout


def test_an_impossible_split_is_refused():
    with pytest.raises(UsageError, match="needs >= 1"):
        ChainSpec(heldout_size=0).split()


def test_worked_solutions_are_long_and_prompts_fit_the_preset():
    from infoppo_cli.data.templates import build_prompt
    from infoppo_cli.train.presets import preset

    spec, teacher = ChainSpec(train_size=400, heldout_size=20), ChainTeacherSpec()
    train, _ = spec.split()
    tokenizer = train_tokenizer([teacher.corpus_text(p) for p in train], 400, (DAPO_PREFIX, DAPO_SUFFIX))
    rng = random.Random(0)
    lengths = [len(tokenizer(teacher.respond(p, rng) + TURN_END)["input_ids"]) for p in train[:100]]
    prompts = [len(tokenizer(build_prompt(tokenizer, p.text, "dapo"))["input_ids"]) for p in train[:100]]
    long = preset("tiny-cpu-long")
    assert min(lengths) >= 100 and max(lengths) <= 300  # a horizon of 100 to 300 tokens (tiny-cpu-long)
    assert max(lengths) <= long.max_response_tokens == spec.max_response_tokens
    assert max(prompts) <= long.max_prompt_tokens


def test_the_shortcut_teacher_answers_short_or_worked_out_and_working_it_out_pays():
    teacher, rng = ShortcutTeacherSpec(shortcut_share=0.5, shortcut_slip_rate=0.15), random.Random(5)
    problems = [draw_problem(10, rng) for _ in range(3000)]
    answers = [(teacher.respond(p, rng), p) for p in problems]
    short = [(text, p) for text, p in answers if len(text.splitlines()) == 3]
    worked = [(text, p) for text, p in answers if len(text.splitlines()) == 13]
    assert len(short) + len(worked) == len(answers)
    assert len(short) / len(answers) == pytest.approx(0.5, abs=0.03)
    assert all(text.startswith(f"We start with {p.start}.\nThe result is") for text, p in short)

    def right(pairs):
        return sum(grade(text, str(p.answer)).correct for text, p in pairs) / len(pairs)

    assert right(worked) > right(short) + 0.2  # the long answer pays
    assert right(answers) == pytest.approx(teacher.expected_accuracy(10), abs=0.03)
    exact = [teacher.respond(p, rng, exact=True) for p in problems[:200]]
    assert all(grade(text, str(p.answer)).correct for text, p in zip(exact, problems, strict=False))


@pytest.mark.slow
def test_the_shortcut_model_writes_both_lengths(shortcut_task):
    """tiny-cpu-shortcut's warm-started model, as built: at temperature 1.0 its responses mix ~15-token
    shortcuts and ~210-token worked solutions (the mean lies well between, every response finished), and
    its accuracy is between the shortcuts' and the worked solutions'."""
    measured = shortcut_task.warm_start["heldout_accuracy"]
    assert 60 < measured["mean_response_tokens"] < 170
    assert measured["finished_share"] == 1.0
    assert 0.1 < measured["temperature_1"] < 0.5
