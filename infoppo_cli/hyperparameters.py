"""The valid ranges of the method's hyper-parameters, checked without torch.

``infotime``'s functions check their arguments here, and so does planning (``infoppo train``, ``sweep``,
``inspect``), which refuses a bad value in a fraction of a second because this module imports nothing
heavy.
"""

from __future__ import annotations

import math


def _check_range(name: str, value: float, low: float, high: float, low_open: bool = False) -> None:
    ok_low = value > low if low_open else value >= low
    if not (ok_low and value <= high) or math.isnan(value):
        bracket = "(" if low_open else "["
        raise ValueError(f"{name} must be in {bracket}{low}, {high}], got {value}")


def _check_non_negative(name: str, value: float) -> None:
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")


def validate_hyperparameters(
    gamma: float | None = None,
    lambd: float | None = None,
    eps_low: float | None = None,
    eps_high: float | None = None,
    top_frac: float | None = None,
) -> None:
    """Raise ``ValueError`` with a one-line message for an out-of-range hyper-parameter.

    gamma in (0, 1], lambd in [0, 1], eps_low/eps_high >= 0, top_frac in (0, 1]; ``None`` skips a check.
    """
    if gamma is not None:
        _check_range("gamma", gamma, 0.0, 1.0, low_open=True)
    if lambd is not None:
        _check_range("lambd", lambd, 0.0, 1.0)
    if eps_low is not None:
        _check_non_negative("eps_low", eps_low)
    if eps_high is not None:
        _check_non_negative("eps_high", eps_high)
    if top_frac is not None:
        _check_range("top_frac", top_frac, 0.0, 1.0, low_open=True)
