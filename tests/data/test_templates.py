"""Prompt templates: DAPO's exact text, the boxed variant, and recovering the raw problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.data.templates import TEMPLATES, extract_dapo_problem, render_prompt, strip_baked_instruction
from infoppo_cli.errors import UsageError

# DAPO-Math-17K's prompt for one problem, written out in full.
DAPO_EXAMPLE = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n"
    "Find the largest possible real part of $z$.\n\n"
    'Remember to put your answer on its own line after "Answer:".'
)

problems = st.text(min_size=1, max_size=300).filter(lambda s: s.strip() == s and s != "")


def test_dapo_template_is_daposs_text_exactly():
    assert render_prompt("Find the largest possible real part of $z$.") == DAPO_EXAMPLE
    assert render_prompt("Find the largest possible real part of $z$.", "dapo") == DAPO_EXAMPLE


def test_dapo_template_has_no_boxed_instruction_and_literal_dollar_answer():
    text = render_prompt("1+1?")
    assert "\\boxed" not in text
    assert text.count("$Answer") == 2


def test_boxed_template_text():
    assert render_prompt("What is 1+1?", "boxed") == (
        "Solve the following math problem step by step. Put your final answer within \\boxed{}.\n\n"
        "What is 1+1?\n\nRemember to put your final answer within \\boxed{}."
    )


def test_raw_template_is_the_problem_alone():
    assert render_prompt("What is 1+1?", "raw") == "What is 1+1?"


@given(problems)
def test_every_listed_template_renders_the_problem_whole_and_differently(problem):
    prompts = [render_prompt(problem, name) for name in TEMPLATES]
    assert all(problem in prompt for prompt in prompts)
    assert len(set(prompts)) == len(TEMPLATES)  # no name is another's template


def test_unknown_template_lists_the_choices():
    with pytest.raises(UsageError, match=r"unknown template 'chatml'; choose one of: dapo, boxed, raw"):
        render_prompt("x", "chatml")


def test_extract_dapo_problem_from_the_real_layout():
    assert extract_dapo_problem(DAPO_EXAMPLE) == "Find the largest possible real part of $z$."


def test_extract_keeps_blank_lines_inside_the_problem():
    problem = "Part one.\n\nPart two with $x$."
    assert extract_dapo_problem(render_prompt(problem)) == problem


@pytest.mark.parametrize(
    "text",
    ["What is 1+1?", render_prompt("What is 1+1?", "boxed"), "", render_prompt("   ", "dapo")],
)
def test_extract_returns_none_for_other_prompts(text):
    assert extract_dapo_problem(text) is None


@given(problems)
def test_extract_inverts_render(problem):
    assert extract_dapo_problem(render_prompt(problem, "dapo")) == problem


@pytest.mark.parametrize(
    "baked",
    [
        "Let's think step by step and output the final answer within \\boxed{}.",
        "Let's think step by step and output the final answer within \\boxed{}",
        'Let\'s think step by step and output the final answer after "####".',
        "Please reason step by step, and put your final answer within \\boxed{}.",
    ],
)
def test_strip_baked_instruction(baked):
    assert strip_baked_instruction(f"What is $1+1$? {baked}") == "What is $1+1$?"
    assert strip_baked_instruction(f"What is $1+1$?\n\n{baked}\n") == "What is $1+1$?"


def test_strip_baked_instruction_leaves_other_problems_alone():
    problem = "Let's think about $n$: what is the final answer within the box $[0,1]$?"
    assert strip_baked_instruction(problem) == problem
