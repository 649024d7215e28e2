"""The suite's order for pytest-xdist's ``worksteal`` scheduler: each worker's share starts with the heavy
units (modules, or the tests sharing a trained run: the end-to-end runs, a minute or more each), dealt
longest first to the least loaded worker, and ends with light tests, which the workers steal from each
other's tails until they finish together.

``worksteal`` hands worker i the i-th of ``workers`` consecutive, equal-count slices of the collection and
then lets an idle worker take half of the longest queue from its end. In collection order the heavy
modules fall where the alphabet puts them, so one worker could be left running the README's quickstart
alone at the end; here each slice is the heavy units of one bin plus enough light tests to fill it.

The seconds come from the previous sessions (``record`` keeps each test's setup, call and teardown in
pytest's cache); with none recorded, the collection order is kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CACHE_KEY = "infoppo/test-seconds"
HEAVY_UNIT_SECONDS = 20.0
"""A unit (``unit_of``) this slow in the last session (its tests' setup, call and teardown together) is
placed whole at the head of a worker's slice; the rest is filler that stealing balances."""


SHARED_RUNS = frozenset({"exposed_run"})
"""Session fixtures that train a run for tests in several modules: their users are one unit, so that one
worker trains the run once."""


def unit_of(nodeid: str, fixturenames: Sequence[str]) -> str:
    """What is placed as a whole: the shared run a test uses, else its module (module fixtures)."""
    shared = sorted(SHARED_RUNS.intersection(fixturenames))
    return f"fixture {shared[0]}" if shared else nodeid.split("::", 1)[0]


def slice_sizes(count: int, workers: int) -> list[int]:
    """The counts worksteal's first distribution gives its workers (xdist 3.8's ``check_schedule``)."""
    sizes, left = [], count
    for i in range(workers):
        size = left // (workers - i)
        sizes.append(size)
        left -= size
    return sizes


def balanced_order(
    nodeids: Sequence[str], units: Sequence[str], seconds: Mapping[str, float], workers: int
) -> list[int]:
    """Indexes into ``nodeids`` (each test's unit in ``units``) in the order to collect them for
    ``workers`` worksteal workers."""
    members: dict[str, list[int]] = {}
    for index, unit in enumerate(units):
        members.setdefault(unit, []).append(index)
    weight = {unit: sum(seconds.get(nodeids[i], 0.0) for i in indexes) for unit, indexes in members.items()}
    heavy = sorted((u for u in members if weight[u] >= HEAVY_UNIT_SECONDS), key=lambda u: -weight[u])
    if workers < 2 or not heavy:
        return list(range(len(nodeids)))
    bins: list[list[int]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for unit in heavy:  # longest first, to the least loaded bin
        target = loads.index(min(loads))
        bins[target].extend(members[unit])
        loads[target] += weight[unit]
    heavy_set = set(heavy)
    light = [i for unit, indexes in members.items() if unit not in heavy_set for i in indexes]
    order: list[int] = []
    for bin_, size in zip(bins, slice_sizes(len(nodeids), workers), strict=True):
        fill = max(size - len(bin_), 0)
        order.extend(bin_ + light[:fill])
        light = light[fill:]
    return order + light


def merged(previous: Mapping[str, float], measured: Mapping[str, float]) -> dict[str, float]:
    """The cache's record after a session: this session's seconds replace a test's older ones; the tests
    it did not run (``make test-fast`` runs a subset) keep theirs."""
    return {**previous, **measured}
