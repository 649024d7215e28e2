"""The suite's order for ``make test`` (``tests/support/longest_first.py``): every test once, the heavy units
dealt longest first over the workers' slices, and the collection order kept when nothing is recorded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from longest_first import HEAVY_UNIT_SECONDS, balanced_order, merged, slice_sizes, unit_of


def suite(unit_counts: list[int]) -> tuple[list[str], list[str]]:
    """A collection of modules ``m0, m1, ...`` with these many tests each, and each test's unit."""
    nodeids = [f"tests/m{u}.py::t{i}" for u, count in enumerate(unit_counts) for i in range(count)]
    return nodeids, [nodeid.split("::")[0] for nodeid in nodeids]


@given(
    st.lists(st.tuples(st.integers(1, 30), st.floats(0, 300)), min_size=1, max_size=25),
    st.integers(1, 4),
)
def test_every_test_is_placed_once_and_each_heavy_unit_whole_in_collection_order(modules, workers):
    nodeids, units = suite([count for count, _ in modules])
    unit_seconds = {f"tests/m{u}.py": total for u, (_, total) in enumerate(modules)}
    per_test = {f"tests/m{u}.py": total / count for u, (count, total) in enumerate(modules)}
    seconds = {nodeid: per_test[unit] for nodeid, unit in zip(nodeids, units, strict=True)}
    order = balanced_order(nodeids, units, seconds, workers)
    assert sorted(order) == list(range(len(nodeids)))
    sizes = slice_sizes(len(nodeids), workers)
    assert sum(sizes) == len(nodeids) and max(sizes) - min(sizes) <= 1
    heavy = {unit for unit, total in unit_seconds.items() if total >= HEAVY_UNIT_SECONDS * (1 + 1e-9)}
    placed = [units[i] for i in order]
    for unit in heavy:
        where = [k for k, placed_unit in enumerate(placed) if placed_unit == unit]
        assert where == list(range(where[0], where[0] + len(where)))
        assert [order[k] for k in where] == sorted(order[k] for k in where)
    if workers < 2 or not {u for u, t in unit_seconds.items() if t >= HEAVY_UNIT_SECONDS * (1 - 1e-9)}:
        assert order == list(range(len(nodeids)))


def test_the_heavy_units_are_dealt_longest_first_to_the_least_loaded_worker():
    nodeids, units = suite([1, 1, 1, 1, 100])  # four runs and a hundred quick tests
    seconds = {nodeids[0]: 200.0, nodeids[1]: 150.0, nodeids[2]: 120.0, nodeids[3]: 100.0}
    order = balanced_order(nodeids, units, seconds, workers=2)
    first, second = order[:52], order[52:]
    assert first[:2] == [0, 3] and second[:2] == [1, 2]  # 200 + 100 against 150 + 120
    assert all(i >= 4 for i in first[2:] + second[2:])  # then the quick tests, in collection order
    assert first[2:] + second[2:] == sorted(first[2:] + second[2:])


def test_tests_sharing_a_trained_run_are_one_unit():
    assert (
        unit_of("tests/faults/test_final_eval.py::test_a", ["exposed_run", "tmp_path"])
        == "fixture exposed_run"
    )
    assert unit_of("tests/faults/test_run_exposure.py::test_b", ["exposed_run"]) == "fixture exposed_run"
    assert unit_of("tests/faults/test_full_disk.py::test_c", ["tmp_path"]) == "tests/faults/test_full_disk.py"


def test_a_session_that_ran_a_subset_keeps_the_other_tests_seconds():
    assert merged({"a": 1.0, "b": 2.0}, {"b": 5.0, "c": 3.0}) == {"a": 1.0, "b": 5.0, "c": 3.0}
