"""The arithmetic task: every problem's answer, a disjoint and reproducible split, rows in data prep's
layout, and a held-out file that the benchmark loader reads as a local benchmark."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.data.dapo import prepare_dapo
from infoppo_cli.data.templates import extract_dapo_problem
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import load_bench
from infoppo_cli.tasks.arithmetic import (
    ArithmeticSpec,
    Problem,
    heldout_row,
    problem_space,
    split_problems,
    train_row,
    write_jsonl,
)

specs = st.builds(
    ArithmeticSpec,
    first_max=st.integers(0, 40),
    second_max=st.integers(0, 12),
    operations=st.sampled_from([("+",), ("-",), ("+", "-")]),
    train_size=st.integers(1, 60),
    heldout_size=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)


@given(st.integers(0, 999), st.integers(0, 999))
def test_answers_are_the_sum_and_the_difference(a, b):
    assert Problem(a, "+", b).answer == a + b
    assert Problem(a, "-", b).answer == a - b
    assert Problem(a, "+", b).text == f"What is {a} + {b}?"


def test_the_default_space_is_a_number_below_100_and_a_digit_with_no_negative_difference():
    problems = problem_space(ArithmeticSpec())
    assert len(problems) == 100 * 10 + sum(100 - b for b in range(10))
    assert all(0 <= p.a <= 99 and 0 <= p.b <= 9 and p.answer >= 0 for p in problems)
    assert len({p.text for p in problems}) == len(problems)


@settings(max_examples=60, deadline=None)
@given(specs)
def test_the_split_is_disjoint_sized_and_reproducible(spec):
    if spec.train_size + spec.heldout_size > len(problem_space(spec)):
        with pytest.raises(UsageError, match="cannot draw"):
            split_problems(spec)
        return
    train, heldout = split_problems(spec)
    assert (len(train), len(heldout)) == (spec.train_size, spec.heldout_size)
    assert not {p.text for p in train} & {p.text for p in heldout}
    assert not {p.id for p in train} & {p.id for p in heldout}
    assert split_problems(spec) == (train, heldout)


def test_the_default_split_is_disjoint_and_another_seed_draws_another_split():
    train, heldout = split_problems(ArithmeticSpec())
    assert not {p.text for p in train} & {p.text for p in heldout}
    assert split_problems(ArithmeticSpec(seed=1))[1] != heldout


@pytest.mark.parametrize(
    "spec, message",
    [
        (ArithmeticSpec(operations=("*",)), "operations must be"),
        (ArithmeticSpec(operations=()), "operations must be"),
        (ArithmeticSpec(second_max=-1), "must be >= 0"),
        (ArithmeticSpec(heldout_size=0), "cannot draw"),
    ],
)
def test_bad_specs_are_refused_with_a_reason(spec, message):
    with pytest.raises(UsageError, match=message):
        split_problems(spec)


def test_train_rows_have_the_layout_data_prep_writes(tmp_path):
    problem = Problem(37, "+", 8)
    source = tmp_path / "source.jsonl"
    source.write_text(json.dumps({"prompt": problem.text, "label": "45"}) + "\n")
    prepared = tmp_path / "prepared.jsonl"
    prepare_dapo(str(source), out=prepared)
    reference = json.loads(prepared.read_text())
    row = train_row(problem)
    assert set(row) == set(reference)
    assert {key: row[key] for key in ("prompt", "label", "lang", "problem")} == {
        key: reference[key] for key in ("prompt", "label", "lang", "problem")
    }
    assert extract_dapo_problem(row["prompt"]) == "What is 37 + 8?"


def test_heldout_file_loads_as_a_local_benchmark(tmp_path):
    _, heldout = split_problems(ArithmeticSpec(heldout_size=25))
    path = tmp_path / "heldout.jsonl"
    write_jsonl(path, (heldout_row(problem) for problem in heldout))
    loaded = load_bench("amc23", path)
    assert [(p.id, p.problem, p.answer) for p in loaded] == [(p.id, p.text, str(p.answer)) for p in heldout]
