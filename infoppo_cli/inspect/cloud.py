"""A word cloud drawn with matplotlib: each word is a text artist, placed at the first point of a spiral
out of the axes' centre where its box, as the renderer measures it, lies inside the axes and clear of
every word placed before it. A word with no such place is tried smaller, down to :data:`MIN_POINTS`;
one that fits nowhere even then is left out (and counted), never drawn over another."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_POINTS = 60.0
MIN_POINTS = 7.0
SMALLEST = 0.25
"""The least-weighted word's size relative to the largest's."""
FILL = 0.3
"""The share of the axes the words' boxes cover, before packing shrinks any."""
SHRINK = 0.85
"""Each retry draws a word that found no place this much smaller."""
GAP_PIXELS = 3.0
"""Free space kept around every word."""
_SPIRAL_STEP = 4.0
"""Pixels between consecutive places tried along the spiral, and between its turns."""


def spiral(width: float, height: float) -> np.ndarray:
    """Places (x, y) in pixels from the axes' lower left, along an Archimedean spiral out of the centre
    (stretched to the axes' aspect), closest first."""
    reach = math.hypot(width, height) / 2
    radii, angles, radius, angle = [0.0], [0.0], 0.0, 0.0
    while radius < reach:
        angle += _SPIRAL_STEP / max(radius, _SPIRAL_STEP)
        radius = _SPIRAL_STEP * angle / (2 * math.pi)
        radii.append(radius)
        angles.append(angle)
    r, a = np.array(radii), np.array(angles)
    stretch = width / height if height else 1.0
    return np.stack([width / 2 + r * np.cos(a) * stretch, height / 2 + r * np.sin(a)], axis=1)


def _free(
    places: np.ndarray, box: tuple[float, float, float, float], bounds: tuple[float, float], taken: list
) -> int:
    """The first of ``places`` where a word whose box is ``box`` (x0, y0, x1, y1 from its place) lies
    inside ``bounds`` (width, height) and overlaps none of ``taken`` boxes; -1 for none."""
    x0, y0 = places[:, 0] + box[0], places[:, 1] + box[1]
    x1, y1 = places[:, 0] + box[2], places[:, 1] + box[3]
    ok = (x0 >= 0) & (x1 <= bounds[0]) & (y0 >= 0) & (y1 <= bounds[1])
    for left, bottom, right, top in taken:
        ok &= (x1 <= left) | (x0 >= right) | (y1 <= bottom) | (y0 >= top)
    found = np.flatnonzero(ok)
    return int(found[0]) if found.size else -1


def _scale(axis: Any, renderer: Any, words: Sequence[tuple[str, float, Any]], box: Any) -> float:
    """Points per unit of weight-scaled size such that the words' boxes cover about :data:`FILL` of the
    axes, the widest word within it, and no word above :data:`MAX_POINTS`."""
    probe = axis.text(0, 0, "", fontsize=10.0, parse_math=False)
    area, widest = 0.0, 0.0
    for text, weight, _ in words:
        probe.set_text(text)
        probe.set_fontsize(10.0 * _relative(weight))
        extent = probe.get_window_extent(renderer)
        area += extent.width * extent.height
        widest = max(widest, extent.width / _relative(weight))
    probe.remove()
    if not area:
        return MAX_POINTS
    fill = 10.0 * math.sqrt(FILL * box.width * box.height / area)
    return min(fill, 10.0 * 0.9 * box.width / widest if widest else fill, MAX_POINTS)


def _relative(weight: float) -> float:
    """A word's size relative to the largest: from :data:`SMALLEST` (weight 0) to 1."""
    return SMALLEST + (1.0 - SMALLEST) * min(max(weight, 0.0), 1.0)


def draw_cloud(axis: Any, words: Sequence[tuple[str, float, Any]]) -> int:
    """Draw ``words`` ((text, weight in [0, 1], colour), the first placed first, nearest the centre) on
    ``axis``, their font sizes in proportion to :func:`_relative` of their weight, scaled to fill the axes;
    returns how many were placed. Each word keeps a free margin of a third of its height on either side
    (tokens side by side must not read as one word). The axis is turned off and its data coordinates
    set to its pixels: the figure's layout must be final before this is called."""
    axis.axis("off")
    renderer = axis.figure.canvas.get_renderer()
    box = axis.get_window_extent(renderer)
    axis.set_xlim(0, box.width)
    axis.set_ylim(0, box.height)
    places = spiral(box.width, box.height)
    largest = _scale(axis, renderer, words, box)
    taken: list[tuple[float, float, float, float]] = []
    for text, weight, colour in words:
        points = max(MIN_POINTS, largest * _relative(weight))
        artist = axis.text(
            box.width / 2, box.height / 2, text, fontsize=points, color=colour, ha="center", va="center",
            parse_math=False,
        )  # fmt: skip
        while True:
            extent = artist.get_window_extent(renderer)  # drawn at the centre: its box from its place
            side, gap = extent.height / 3 + GAP_PIXELS / 2, GAP_PIXELS / 2
            x0, y0 = extent.x0 - box.x0 - box.width / 2 - side, extent.y0 - box.y0 - box.height / 2 - gap
            own = (x0, y0, x0 + extent.width + 2 * side, y0 + extent.height + 2 * gap)
            found = _free(places, own, (box.width, box.height), taken)
            if found >= 0:
                x, y = places[found]
                artist.set_position((x, y))
                taken.append((x + own[0], y + own[1], x + own[2], y + own[3]))
                break
            if points <= MIN_POINTS:
                artist.remove()
                break
            points = max(MIN_POINTS, points * SHRINK)
            artist.set_fontsize(points)
    return len(taken)
