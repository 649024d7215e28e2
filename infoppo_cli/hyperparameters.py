"""What a run setting is: one declaration (:class:`Setting`) with its name, type, range, help, the option
that gives it and where its value lives, checked without torch.

The method settings themselves are declared next to the components that read them
(``components.SETTINGS``); the request, the methods file's schema, ``--resume``'s run-defining keys, the
plan's rows and the command-line options are derived from those declarations. ``infotime``'s functions
guard their arguments with the same ranges (:func:`validate_hyperparameters`). This module imports
nothing heavy, so planning refuses a bad value in a fraction of a second.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Range:
    """The numbers a quantity may take: from ``low`` to ``high`` (``None``: no upper bound, and the number
    must be finite), each bound refused itself when open."""

    low: float
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is refused (``must be in (0.0, 1.0], got 1.5``), or ``None``."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number, got {value!r}"
        low_ok = value > self.low if self.low_open else value >= self.low
        if self.high is None:
            if not low_ok or math.isinf(value) or math.isnan(value):
                return f"must be a finite number {'>' if self.low_open else '>='} {self.low:g}, got {value}"
            return None
        high_ok = value < self.high if self.high_open else value <= self.high
        if not (low_ok and high_ok) or math.isnan(value):
            opened, closed = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"must be in {opened}{float(self.low)}, {float(self.high)}{closed}, got {value}"
        return None


OPEN_UNIT = Range(0.0, 1.0, low_open=True)
"""(0, 1]: gamma, a share of the tokens that keeps some."""
UNIT = Range(0.0, 1.0)
"""[0, 1]: lambda."""
NON_NEGATIVE = Range(0.0)
"""Finite and >= 0: the adaptive clip's epsilons."""


@dataclass(frozen=True)
class Setting:
    """One setting of a training run, declared once.

    name: its one name: the key in a method's ``[NAME.infotime]`` table, the ``TrainRequest`` field, the
      key in the run's configuration and (unless its option is spelled otherwise) ``--resume-override``'s.
    help: what it is (``--help``).
    kind: ``float``, ``str`` (one of ``choices``) or ``bool``.
    range: the numbers it takes (a ``float`` setting).
    flags: its command-line spellings (``None``: ``--name`` with dashes; ``()``: a methods file's alone).
    openrlhf: the OpenRLHF flag that carries it (``algo.advantage.gamma``); ``None``: infoppo's own, in
      a method's ``[NAME.infotime]`` table and the run's configuration.
    applies: whether a method (its components) takes it; ``None``: when its components read it.
    applies_text: how a refusal says which methods take it.
    run_defining: a resumed run must keep it unless ``--resume-override`` names it.
    """

    name: str
    help: str
    kind: type = float
    range: Range | None = None
    choices: tuple[str, ...] = ()
    flags: tuple[str, ...] | None = None
    openrlhf: str | None = None
    applies: Callable[[Any], bool] | None = None
    applies_text: str = "whose components read it"
    run_defining: bool = True

    @property
    def options(self) -> tuple[str, ...]:
        """The command-line spellings (none for a setting only a methods file gives)."""
        return ("--" + self.name.replace("_", "-"),) if self.flags is None else self.flags

    @property
    def key(self) -> str:
        """``--resume-override``'s key: the first option without its dashes (``lambda``), else the name."""
        return self.options[0].removeprefix("--").replace("-", "_") if self.options else self.name

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is refused, or ``None``."""
        if self.choices:
            return (
                None if value in self.choices else f"must be one of {', '.join(self.choices)}, got {value!r}"
            )
        if self.kind is bool:
            return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
        return self.range.problem(value) if self.range is not None else None

    def check(self, value: Any, shown_as: str | None = None) -> None:
        """Raise ``ValueError`` (one line that names the setting as ``shown_as``, else by its name) for a
        refused value; ``None`` is no value."""
        problem = None if value is None else self.problem(value)
        if problem:
            raise ValueError(f"{shown_as or self.name} {problem}")

    def takes(self, method: Any) -> bool:
        """Whether ``method`` (its components) takes this setting."""
        return self.applies(method) if self.applies is not None else self.name in method.needed_settings()


_MATHS = {"gamma": OPEN_UNIT, "lambd": UNIT, "eps_low": NON_NEGATIVE, "eps_high": NON_NEGATIVE}
_MATHS["top_frac"] = OPEN_UNIT


def validate_hyperparameters(**values: float | None) -> None:
    """``infotime``'s guard of its arguments, by their names there (gamma, lambd, eps_low, eps_high,
    top_frac): a ``ValueError`` with a one-line message for a value out of its range; ``None`` is none."""
    for name, value in values.items():
        problem = None if value is None else _MATHS[name].problem(value)
        if problem:
            raise ValueError(f"{name} {problem}")
