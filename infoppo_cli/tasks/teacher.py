"""The responses the warm start imitates: a careless teacher, right only part of the time.

A model that imitated a perfect teacher would leave reinforcement learning nothing to do. This one
writes ``Answer: N`` with the right ``N`` most often, yet it sometimes slips: an answer off by one or
two, or a final line without DAPO's ``Answer:`` (which the grader cannot read, so it scores as wrong).
The student learns the sums and, with them, the teacher's rate of slips, so at temperature 1.0 it is
right part of the time while its most likely answer is usually the right one. That gap is what RL can
close: the reward teaches it to stop slipping, on held-out problems as on training ones.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

from infoppo_cli.tasks.arithmetic import Problem


@dataclass(frozen=True)
class TeacherSpec:
    """How often the teacher slips: ``wrong_rate`` of its answers are off by 1 or 2; ``unanchored_rate``
    of its responses say ``The answer is N`` instead of ``Answer: N``."""

    wrong_rate: float = 0.4
    unanchored_rate: float = 0.3

    def recipe(self) -> dict[str, Any]:
        return asdict(self)

    def respond(self, problem: Problem, rng: random.Random, exact: bool = False) -> str:
        """One response (see :func:`teacher_response`); ``exact`` never slips."""
        return teacher_response(problem, EXACT if exact else self, rng)

    def expected_accuracy(self, decisions: int) -> float:
        """The share of the teacher's responses that grade correct (it decides only the answer)."""
        return expected_accuracy(self)

    def corpus_text(self, problem: Problem) -> str:
        """The text the tokenizer learns from for ``problem``: chat roles, problem, both answer forms."""
        answers = f"{ANCHORED.format(problem.answer)} {UNANCHORED.format(problem.answer)}"
        return f"user assistant {problem.text} {answers}"


ANCHORED = "Answer: {}"
UNANCHORED = "The answer is {}"
OFFSETS = (-2, -1, 1, 2)
EXACT = TeacherSpec(wrong_rate=0.0, unanchored_rate=0.0)


def teacher_response(problem: Problem, spec: TeacherSpec, rng: random.Random) -> str:
    """One response of the teacher to ``problem`` (without the end-of-turn token)."""
    answer = problem.answer
    if rng.random() < spec.wrong_rate:
        offset = rng.choice(OFFSETS)
        answer = answer + offset if answer + offset >= 0 else answer - offset
    form = UNANCHORED if rng.random() < spec.unanchored_rate else ANCHORED
    return form.format(answer)


def expected_accuracy(spec: TeacherSpec) -> float:
    """The share of the teacher's responses that grade correct, which a perfect student would match."""
    return (1.0 - spec.wrong_rate) * (1.0 - spec.unanchored_rate)
