"""A synthetic arithmetic task in DAPO-Math-17K's clothes: two-number sums and differences.

Every problem of the space (``a + b`` and, with ``a >= b``, ``a - b``, for ``a`` up to ``first_max``
and ``b`` up to ``second_max``: by default a number below 100 and a digit) is listed, shuffled with a
seed and cut into a held-out set and a training set, so the two never share a problem. Training rows
have the layout ``infoppo data prep dapo-math-17k`` writes (the problem in DAPO's template, the gold
stored as the grader reads golds); held-out rows have the ``id`` / ``problem`` / ``answer`` columns
that :func:`infoppo_cli.eval.benchmarks.load_bench` reads from a local file, so the held-out set can
serve as an in-training benchmark.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.data.templates import render_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.grading import normalise_answer

SOURCE = "synthetic-arithmetic"
"""The ``source`` of every training row."""


@dataclass(frozen=True)
class ArithmeticSpec:
    """Which problems exist (operand ranges, operations) and how they are split (sizes, seed)."""

    first_max: int = 99
    second_max: int = 9
    operations: tuple[str, ...] = ("+", "-")
    train_size: int = 1700
    heldout_size: int = 200
    seed: int = 0
    source: ClassVar[str] = SOURCE
    max_response_tokens: ClassVar[int] = 16
    """The token budget the warm start's accuracy is sampled with: answers take ~7 tokens."""
    decisions: ClassVar[int] = 1
    """Decisions whose slips reach the answer: writing the answer."""

    def recipe(self) -> dict[str, Any]:
        """Everything that decides the generated files, for the cache's recipe hash."""
        return {**asdict(self), "operations": list(self.operations), "template": "dapo"}

    def split(self) -> tuple[list[Problem], list[Problem]]:
        return split_problems(self)


@dataclass(frozen=True)
class Problem:
    """One arithmetic problem: its statement and its integer answer."""

    a: int
    operation: str
    b: int

    @property
    def text(self) -> str:
        return f"What is {self.a} {self.operation} {self.b}?"

    @property
    def answer(self) -> int:
        return self.a + self.b if self.operation == "+" else self.a - self.b

    @property
    def id(self) -> str:
        return "arith-" + hashlib.blake2b(self.text.encode("utf-8"), digest_size=6).hexdigest()


def problem_space(spec: ArithmeticSpec) -> list[Problem]:
    """Every problem the spec allows, in a fixed order (differences only where they are non-negative)."""
    unknown = set(spec.operations) - {"+", "-"}
    if unknown or not spec.operations:
        raise UsageError(f"arithmetic operations must be '+' and/or '-', not {sorted(unknown) or 'none'}")
    if min(spec.first_max, spec.second_max) < 0:
        raise UsageError(f"arithmetic operands must be >= 0, got {spec.first_max} and {spec.second_max}")
    return [
        Problem(a, operation, b)
        for operation in spec.operations
        for a in range(spec.first_max + 1)
        for b in range(spec.second_max + 1)
        if operation == "+" or a >= b
    ]


def split_problems(spec: ArithmeticSpec) -> tuple[list[Problem], list[Problem]]:
    """``(train, heldout)``: disjoint samples of the problem space, the same for the same spec."""
    problems = problem_space(spec)
    needed = spec.train_size + spec.heldout_size
    if spec.train_size < 1 or spec.heldout_size < 1 or needed > len(problems):
        raise UsageError(
            f"the arithmetic task has {len(problems)} problems; cannot draw {spec.train_size} for "
            f"training and {spec.heldout_size} held out (both must be >= 1)"
        )
    random.Random(spec.seed).shuffle(problems)
    return problems[spec.heldout_size : needed], problems[: spec.heldout_size]


def train_row(problem: Any, source: str = SOURCE) -> dict[str, Any]:
    """A training row, keyed as ``infoppo data prep dapo-math-17k`` writes them (any task's problem:
    ``id``, ``text``, ``answer``)."""
    return {
        "id": problem.id,
        "prompt": render_prompt(problem.text, "dapo"),
        "label": normalise_answer(str(problem.answer)),
        "source": source,
        "lang": "en",
        "problem": problem.text,
    }


def heldout_row(problem: Any) -> dict[str, Any]:
    """A held-out row in the columns a local benchmark file is read by (``id``, ``problem``, ``answer``)."""
    return {"id": problem.id, "problem": problem.text, "answer": str(problem.answer)}


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write ``rows`` to ``path`` as JSON lines, atomically."""
    atomic_write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
