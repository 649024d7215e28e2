"""The cells of one math-data row, read the same way by data prep and by evaluation."""

from __future__ import annotations

import pytest

from infoppo_cli.data.rows import (
    EMPTY_PROMPT,
    WRONG_TYPE,
    answer_text,
    is_verl_row,
    prompt_text,
    raw_problem,
    row_cells,
)

VERL = {
    "prompt": [{"role": "user", "content": "What is 2+2?"}],
    "reward_model": {"ground_truth": "4", "style": "rule"},
    "extra_info": {"index": 7, "raw_problem": "What is 2+2?"},
}


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        (VERL, (VERL["prompt"], "4", 7)),
        ({"question": "Q", "answer": 5}, ("Q", 5, None)),
        ({"problem": "P", "label": "1", "solution": "x"}, ("P", "1", None)),  # the first answer column
        ({"prompt": "p", "reward_model": None}, ("p", None, None)),
        ({"prompt": "p", "reward_model": "4"}, ("p", WRONG_TYPE, None)),
        ({"prompt": "p", "label": "1", "extra_info": "not an object"}, ("p", "1", None)),
        ([1, 2], (WRONG_TYPE, WRONG_TYPE, None)),
    ],
)
def test_row_cells_in_either_layout(row, cells):
    assert row_cells(row) == cells


def test_a_verl_row_is_known_by_its_prompt_and_reward_model():
    assert is_verl_row(VERL) and is_verl_row(["prompt", "reward_model", "data_source"])
    assert not is_verl_row({"prompt": "p", "label": "1"}) and not is_verl_row(["reward_model"])


def test_raw_problem_only_when_written():
    assert raw_problem(VERL) == "What is 2+2?"
    assert raw_problem({"extra_info": {"raw_problem": "  "}}) is None and raw_problem({}) is None


def test_prompt_and_answer_text():
    assert prompt_text([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]) == "u"
    assert prompt_text("  ") is EMPTY_PROMPT and prompt_text(5) is WRONG_TYPE
    assert answer_text(27.0) == "27" and answer_text(" 3 ") == "3" and answer_text(True) is WRONG_TYPE
