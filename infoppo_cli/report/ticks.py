"""Axis ticks a reader can use: x ticks at steps the curves were logged at (an accuracy curve's are its eval
steps), a few round ones when there are many; numbers written plainly (``0.95``, ``0.001``, ``1e-6``,
``51.2k``), never ``9.5×10⁻¹``, on a log axis too."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator

MOST_TICKS = 7
"""Ticks an axis of one panel (3.3 in) holds with its labels apart."""
PLAIN_RANGE = (1e-3, 1e6)
"""Magnitudes written as decimals; beyond them ``1e-6``."""
_NICE = (1, 2, 5)


def plain_number(value: float, _position: Any = None) -> str:
    """``value`` as a reader writes it: ``0.95``, ``0.001``, ``1200``, ``1e-6``, ``2.5e-12``."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if PLAIN_RANGE[0] <= abs(value) < PLAIN_RANGE[1]:
        return f"{value:.6g}"
    exponent = math.floor(math.log10(abs(value)) + 1e-9)
    mantissa = f"{abs(value) / 10**exponent:.3g}"
    sign = "-" if value < 0 else ""
    return f"{sign}1e{exponent}" if mantissa == "1" else f"{sign}{mantissa}e{exponent}"


def count_text(value: float, _position: Any = None) -> str:
    """A step or a count of responses: ``40``, ``1050``, ``51.2k``, ``1.28M``."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g}M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:.3g}k"
    return f"{value:g}"


def _nice_up_to(span: float) -> list[int]:
    """1, 2, 5, 10, 20, 50, ... up to ``span``."""
    found, scale = [], 1
    while scale <= span:
        found += [nice * scale for nice in _NICE if nice * scale <= span]
        scale *= 10
    return found


def step_ticks(steps: Iterable[float], most: int = MOST_TICKS) -> list[float]:
    """Where the x ticks go: round numbers across the span when the steps are not whole (a figure
    against the mean over seeds of the responses generated); every step logged when there are at most
    ``most``; else the logged steps that are multiples of a round number (1, 2, 5, 10, 20, ... times the
    steps' common spacing), as many as fit; else every k-th logged step."""
    points = sorted({float(step) for step in steps if math.isfinite(step)})
    if not all(point.is_integer() for point in points):  # means over seeds (of responses): round ones
        return _round_ticks(points[0], points[-1], most)
    if len(points) <= most:
        return points
    unit = math.gcd(*(int(b - a) for a, b in zip(points, points[1:], strict=False)))
    span = points[-1] - points[0]
    nice = _nice_up_to(span)
    strides = sorted({*(n for n in nice if n % unit == 0), *(unit * n for n in nice if unit * n <= span)})
    for stride in strides:
        for origin in (0.0, points[0]):  # round numbers first, else from the first step on
            chosen = [point for point in points if (point - origin) % stride == 0]
            if 2 <= len(chosen) <= most:
                return chosen
    every = math.ceil(len(points) / most)
    return points[::every]


def _round_ticks(low: float, high: float, most: int) -> list[float]:
    """Multiples of the smallest round stride (1, 2, 5, 10, ...) that puts at most ``most`` ticks in
    [low, high]."""
    for stride in _nice_up_to(max(high - low, 1.0)):
        first, last = math.ceil(low / stride), math.floor(high / stride)
        if last - first + 1 <= most:
            return [float(k * stride) for k in range(first, last + 1)]
    return [low, high]


def set_step_ticks(ax: Any, steps: Sequence[float]) -> None:
    """Put the x ticks at :func:`step_ticks` of ``steps``, labelled by :func:`count_text`."""
    ticks = step_ticks(steps)
    if not ticks:
        return
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(count_text))
    ax.xaxis.set_minor_locator(NullLocator())


def set_plain_log_ticks(ax: Any, values: Iterable[float]) -> None:
    """A log y axis labelled in plain numbers: within one decade about five evenly spaced ticks
    (``0.93 0.94 ... 0.98``), across decades powers of ten (``1 0.1 0.01 1e-6``) with unlabelled minor
    ticks between them (2-9 times each power over at most three decades, else one per decade)."""
    shown = [value for value in values if math.isfinite(value) and value > 0]
    if not shown:
        return
    decades = math.log10(max(shown) / min(shown))
    if decades < 1:
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_minor_locator(NullLocator())
    else:
        ax.yaxis.set_major_locator(LogLocator(base=10, numticks=MOST_TICKS))
        between = tuple(range(2, 10)) if decades <= 3 else (1.0,)  # many decades: one minor tick each
        ax.yaxis.set_minor_locator(LogLocator(base=10, subs=between, numticks=100))
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    ax.yaxis.set_minor_formatter(NullFormatter())
