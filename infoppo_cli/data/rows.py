"""The cells of one math-data row, in the two layouts infoppo reads, with every malformed cell marked by
the reason it is malformed (:class:`Bad`).

* verl's layout (DAPO-Math-17K, the DAPO AIME files): ``prompt`` = a chat message list,
  ``reward_model.ground_truth``, ``extra_info.index`` and sometimes ``extra_info.raw_problem``;
* a flat one: ``prompt``/``problem``/``question`` with ``label``/``answer``/``ground_truth``/``solution``.

``data prep`` reads prompt sources with it (:mod:`infoppo_cli.data.sources`, which reads the same names
column-wise from Arrow) and evaluation reads benchmark files with it (``infoppo_cli.eval.benchmarks``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

PROMPT_COLUMNS = ("prompt", "problem", "question")
ANSWER_COLUMNS = ("label", "answer", "ground_truth", "solution")
REWARD_MODEL, GROUND_TRUTH = "reward_model", "ground_truth"
"""verl's answer: ``row["reward_model"]["ground_truth"]``."""
EXTRA_INFO, SOURCE_INDEX, RAW_PROBLEM = "extra_info", "index", "raw_problem"
"""verl's ``extra_info``: the row's index in its source, and the problem before templating."""


class Bad:
    """A malformed cell, carrying the reason it is malformed."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


MISSING_PROMPT, EMPTY_PROMPT = Bad("missing prompt"), Bad("empty prompt")
MISSING_ANSWER, EMPTY_ANSWER = Bad("missing ground truth"), Bad("empty ground truth")
WRONG_TYPE, INVALID_JSON = Bad("wrong type"), Bad("invalid JSON")


def is_verl_row(columns: Mapping[str, Any] | list[str]) -> bool:
    """Whether a row (or a table's columns) is in verl's layout: a ``prompt`` and a ``reward_model``."""
    return REWARD_MODEL in columns and "prompt" in columns


def row_cells(row: Any) -> tuple[Any, Any, Any]:
    """(prompt cell, answer cell, source index) of one JSON row, in verl's or the flat layout; a row that
    is not an object gives :data:`WRONG_TYPE` cells."""
    if isinstance(row, Bad):
        return row, row, None
    if not isinstance(row, dict):
        return WRONG_TYPE, WRONG_TYPE, None
    prompt = next((row[n] for n in PROMPT_COLUMNS if n in row), None)
    if REWARD_MODEL in row:
        reward_model = row[REWARD_MODEL]
        answer = reward_model.get(GROUND_TRUTH) if isinstance(reward_model, dict) else WRONG_TYPE
        if reward_model is None:
            answer = None
    else:
        answer = next((row[n] for n in ANSWER_COLUMNS if n in row), None)
    extra = row.get(EXTRA_INFO)
    return prompt, answer, extra.get(SOURCE_INDEX) if isinstance(extra, dict) else None


def raw_problem(row: Mapping[str, Any]) -> str | None:
    """verl's ``extra_info.raw_problem``: the problem as written before templating, when recorded."""
    extra = row.get(EXTRA_INFO)
    value = extra.get(RAW_PROBLEM) if isinstance(extra, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def prompt_text(value: Any) -> str | Bad:
    """The user text of a prompt cell: a string, or a chat message list (last user turn)."""
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list):
        if not value:
            return MISSING_PROMPT
        users = [m for m in value if isinstance(m, dict) and m.get("role", "user") == "user"]
        if not users:
            return WRONG_TYPE if not all(isinstance(m, dict) for m in value) else MISSING_PROMPT
        value = users[-1].get("content")
    if value is None:
        return MISSING_PROMPT
    if not isinstance(value, str):
        return WRONG_TYPE
    return value if value.strip() else EMPTY_PROMPT


def answer_text(value: Any) -> str | Bad:
    """The ground truth of a row as a string (integers and integer-valued floats become digits)."""
    if value is None:
        return MISSING_ANSWER
    if isinstance(value, str):
        value = value.strip()
        return value if value else EMPTY_ANSWER
    if isinstance(value, bool):
        return WRONG_TYPE
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    return WRONG_TYPE
