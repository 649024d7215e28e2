"""A long-horizon task: a chain of one-digit additions and subtractions, worked out step by step.

Each problem starts from a two-digit number and lists ``steps`` numbered operations ("(3) subtract
6"); the running total stays between 0 and 99. The worked solution restates every operation and
writes its result, one line per step, then the result and DAPO's answer line::

    We start with 37.
    (1) then add 8: 37 + 8 gives 45
    (2) next subtract 6: 45 - 6 = 39
    ...
    The result is 41.
    Answer: 41

A response is about 210 tokens (digits are one token each), and almost all of them are forced:
the step numbers, the operation copied from the problem, the previous total copied from the line
above, the final number copied from the last line. The genuine decisions are the result digits
of each step, and one slip there carries through every later line to a wrong answer, so the reward
at the end of the response depends on choices made up to 200 tokens earlier. Each line also has two
free words, an opener and the verb before the result, that the teacher picks at random and the
grader ignores: they are where a model's next-token entropy is high, so the information clock
advances by one to two units per line (Σρ of about 18 over a response, against under 3 when
every line was phrased alike), and γ < 1 discounts in both clocks while they still differ: γ^T
discounts the first step's choice by γ^200 in token time, information time by γ^(Σρ) (see
docs/training.md, "The long-horizon task").

Problems are drawn with a seed, without repeats; the first ``heldout_size`` are held out, the next
``train_size`` are the training set, so the two never share a problem.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass
from typing import Any

from infoppo_cli.errors import UsageError

SOURCE = "synthetic-chain"
"""The ``source`` of every training row."""
OPERATIONS = {"add": "+", "subtract": "-"}
LOW, HIGH = 0, 99
"""The running total of a problem stays within these bounds."""
SLIPS = (-2, -1, 1, 2)
"""How far off a slipped result is written."""


@dataclass(frozen=True)
class ChainSpec:
    """How problems are drawn: operations per problem, the split's sizes, the seed."""

    steps: int = 10
    train_size: int = 4000
    heldout_size: int = 200
    seed: int = 0
    source: str = SOURCE
    max_response_tokens: int = 256
    """The token budget of a response (a worked solution takes about 200)."""

    @property
    def decisions(self) -> int:
        """Decisions whose slips reach the answer: one result per operation."""
        return self.steps

    def recipe(self) -> dict[str, Any]:
        """Everything that decides the generated files, for the cache's recipe hash."""
        return {**asdict(self), "family": "chain", "template": "dapo"}

    def split(self) -> tuple[list[ChainProblem], list[ChainProblem]]:
        """``(train, heldout)``: disjoint, the same for the same spec."""
        if self.steps < 1 or self.train_size < 1 or self.heldout_size < 1:
            raise UsageError("a chain task needs >= 1 step, training problem and held-out problem")
        rng = random.Random(self.seed)
        drawn: dict[str, ChainProblem] = {}
        wanted = self.train_size + self.heldout_size
        for _ in range(wanted * 20):
            problem = draw_problem(self.steps, rng)
            drawn.setdefault(problem.text, problem)
            if len(drawn) == wanted:
                problems = list(drawn.values())
                return problems[self.heldout_size :], problems[: self.heldout_size]
        raise UsageError(f"could not draw {wanted} distinct chain problems of {self.steps} steps")


@dataclass(frozen=True)
class ChainProblem:
    """A start value and its numbered operations, each ``(word, operand)``."""

    start: int
    operations: tuple[tuple[str, int], ...]

    @property
    def text(self) -> str:
        listed = "; ".join(f"({i}) {word} {operand}" for i, (word, operand) in enumerate(self.operations, 1))
        return f"Start with {self.start}, then: {listed}. What number do you end with?"

    @property
    def totals(self) -> list[int]:
        """The running total after each operation."""
        totals, value = [], self.start
        for word, operand in self.operations:
            value = apply(value, word, operand)
            totals.append(value)
        return totals

    @property
    def answer(self) -> int:
        return self.totals[-1]

    @property
    def id(self) -> str:
        return "chain-" + hashlib.blake2b(self.text.encode("utf-8"), digest_size=6).hexdigest()


def apply(value: int, word: str, operand: int) -> int:
    return value + operand if word == "add" else value - operand


def draw_problem(steps: int, rng: random.Random) -> ChainProblem:
    """A random problem whose running total stays within [LOW, HIGH]."""
    start = rng.randint(10, HIGH)
    value, operations = start, []
    for _ in range(steps):
        choices = [
            (word, d) for word in OPERATIONS for d in range(1, 10) if LOW <= apply(value, word, d) <= HIGH
        ]
        word, operand = rng.choice(choices)
        operations.append((word, operand))
        value = apply(value, word, operand)
    return ChainProblem(start, tuple(operations))


@dataclass(frozen=True)
class ChainTeacherSpec:
    """How often the teacher slips: ``slip_rate`` of its steps write a result off by 1 or 2, and the
    lines after it carry on from the wrong total (so the final answer is wrong). Each step line opens
    with one of ``openers`` and writes its result after one of ``verbs``, drawn uniformly: choices
    that cost nothing and carry entropy (empty: every line phrased alike, ``=``)."""

    slip_rate: float = 0.06
    openers: tuple[str, ...] = ("then", "next", "now", "so", "again", "also", "here", "after")
    verbs: tuple[str, ...] = ("=", "is", "gives", "makes")

    def recipe(self) -> dict[str, Any]:
        return asdict(self)

    def respond(self, problem: ChainProblem, rng: random.Random, exact: bool = False) -> str:
        """One worked solution (without the end-of-turn token); ``exact`` never slips."""
        lines = [f"We start with {problem.start}."]
        value = problem.start
        for index, (word, operand) in enumerate(problem.operations, 1):
            result = apply(value, word, operand)
            if not exact and rng.random() < self.slip_rate:
                result = _slipped(result, rng)
            opener = f"{rng.choice(self.openers)} " if self.openers else ""
            verb = rng.choice(self.verbs) if self.verbs else "="
            lines.append(
                f"({index}) {opener}{word} {operand}: {value} {OPERATIONS[word]} {operand} {verb} {result}"
            )
            value = result
        lines += [f"The result is {value}.", f"Answer: {value}"]
        return "\n".join(lines)

    def expected_accuracy(self, decisions: int) -> float:
        """The share of the teacher's solutions that grade correct: those whose slips (each off by
        one of ``SLIPS``, drawn uniformly) add up to nothing, none at all being the common case. A slip
        below zero, which is written one above instead, is rare enough to leave out."""
        offsets = {0: 1.0}  # the distribution of the summed slips so far
        for _ in range(decisions):
            following: dict[int, float] = {}
            for total, chance in offsets.items():
                following[total] = following.get(total, 0.0) + chance * (1.0 - self.slip_rate)
                for slip in SLIPS:
                    share = chance * self.slip_rate / len(SLIPS)
                    following[total + slip] = following.get(total + slip, 0.0) + share
            offsets = following
        return offsets[0]

    def corpus_text(self, problem: ChainProblem) -> str:
        phrasing = random.Random(problem.id)  # every opener and verb reaches the tokenizer's corpus
        return f"user assistant {problem.text}\n{self.respond(problem, phrasing, exact=True)}"


@dataclass(frozen=True)
class ShortcutTeacherSpec(ChainTeacherSpec):
    """A teacher that chooses how long to reason: ``shortcut_share`` of its solutions skip the working
    and write the result at once (about 15 tokens instead of 210), slipping on ``shortcut_slip_rate`` of
    the steps done in its head; the others are :class:`ChainTeacherSpec`'s worked solutions. A model
    warm-started on it writes both, so the length of its reasoning is its own choice, made at the first
    token after the opening line, and the long choice pays (a tiny model cannot do ten steps in its
    head). Token time discounts the long choice's reward by γ^200 at that token, information time by
    γ^Σρ: the length effect of the paper's Figure 1, on a CPU."""

    shortcut_share: float = 0.5
    shortcut_slip_rate: float = 0.15

    def respond(self, problem: ChainProblem, rng: random.Random, exact: bool = False) -> str:
        """A worked solution, or with ``shortcut_share`` a shortcut; ``exact`` never slips in either."""
        if rng.random() >= self.shortcut_share:
            return super().respond(problem, rng, exact)
        value = problem.start
        for word, operand in problem.operations:
            value = apply(value, word, operand)
            if not exact and rng.random() < self.shortcut_slip_rate:
                value = _slipped(value, rng)
        return f"We start with {problem.start}.\nThe result is {value}.\nAnswer: {value}"

    def expected_accuracy(self, decisions: int) -> float:
        worked = super().expected_accuracy(decisions)
        shortcut = ChainTeacherSpec(slip_rate=self.shortcut_slip_rate).expected_accuracy(decisions)
        return (1.0 - self.shortcut_share) * worked + self.shortcut_share * shortcut


def _slipped(result: int, rng: random.Random) -> int:
    wrong = result + rng.choice(SLIPS)
    return wrong if wrong >= 0 else result + 1
