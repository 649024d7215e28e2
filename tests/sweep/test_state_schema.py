"""A sweep.json of the wrong shape stops the sweep with one line naming the file and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.request import SweepRequest
from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("valid") / "sw"
    plan = build_plan("gamma", preset="qwen3-4b", out_dir=out, values=["0.999"], eval_benches=("aime24",))
    open_sweep(plan, command=SweepRequest().resume_command(plan), settings=plan.settings())
    return json.loads((out / STATE_FILE).read_text())


DELETE = object()
"""Stands for removing the field instead of setting it."""

CASES: list[tuple[str, tuple, Any, str]] = [
    # (test id, where in the document, the value put there, what the one line says)
    ("a list", (), ["runs"], "it holds a list, not the object infoppo sweep writes"),
    ("a number", (), 3, "it holds a number 3"),
    ("no runs", ("runs",), DELETE, "runs is missing"),
    ("runs an object", ("runs",), {}, "runs must be a list, got an object"),
    ("command a string", ("command",), "infoppo sweep", "command must be a list of strings"),
    ("settings a list", ("settings",), [], "settings must be an object, got a list"),
    ("unknown field", ("extra",), 1, "extra is not a field infoppo sweep writes"),
    ("run a string", ("runs", 0), "gamma", "runs[0] must be an object, got a string"),
    ("seed as text", ("runs", 0, "seed"), "1", "runs[0].seed must be an integer, got a string '1'"),
    ("seed a boolean", ("runs", 0, "seed"), True, "runs[0].seed must be an integer, got a boolean True"),
    ("no output_dir", ("runs", 0, "output_dir"), DELETE, "runs[0].output_dir is missing"),
    (
        "run status",
        ("runs", 0, "status"),
        "paused",
        "runs[0].status must be one of pending, running, done, failed",
    ),
    ("phases null", ("runs", 0, "phases"), None, "runs[0].phases must be a list, got null"),
    (
        "phase status",
        ("runs", 0, "phases", 1, "status"),
        1,
        "runs[0].phases[1].status must be a string, got a number 1",
    ),
    (
        "phase command",
        ("runs", 0, "phases", 0, "command"),
        ["infoppo", 1],
        "phases[0].command must be a list of strings",
    ),
    (
        "empty request",
        ("runs", 0, "phases", 0, "request"),
        {},
        "runs[0].phases[0].request is missing or empty",
    ),
    (
        "empty command",
        ("runs", 0, "phases", 1, "command"),
        [],
        "runs[0].phases[1].command is missing or empty",
    ),
    (
        "request a list",
        ("runs", 0, "phases", 0, "request"),
        [],
        "phases[0].request must be an object or null",
    ),
    ("phase pid", ("runs", 0, "phases", 0, "pid"), "12", "runs[0].phases[0].pid must be an integer or null"),
    (
        "other phase",
        ("runs", 0, "phases", 1, "name"),
        "test",
        "runs[0].phases[1].name must be one of train, eval",
    ),
    ("no train", ("runs", 0, "phases", 0), DELETE, "runs[0].phases has no train phase"),
    (
        "twice",
        ("runs", 1, "name"),
        "gamma-0.999-info-seed1",
        "runs[1].name 'gamma-0.999-info-seed1' is recorded twice",
    ),
    ("schema", ("schema",), "1", "schema must be 2, got '1'"),
    ("older schema", ("schema",), 1, "written by an older infoppo (schema 1: train commands, not requests)"),
]


def changed(document: Any, where: tuple, value: Any) -> Any:
    """A copy of ``document`` with ``value`` put at ``where`` (or the field there removed)."""
    if not where:
        return value
    document = copy.deepcopy(document)
    holder = document
    for key in where[:-1]:
        holder = holder[key]
    if value is DELETE:
        del holder[where[-1]]
    else:
        holder[where[-1]] = value
    return document


@pytest.mark.parametrize(
    ("where", "value", "problem"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_a_state_file_of_the_wrong_shape_names_the_file_and_the_field(
    tmp_path: Path, valid: dict[str, Any], where: tuple, value: Any, problem: str
) -> None:
    path = tmp_path / STATE_FILE
    path.write_text(json.dumps(changed(valid, where, value)))
    with pytest.raises(UsageError) as refused:
        SweepState.load(path)
    message = str(refused.value)
    assert message.startswith(f"cannot read sweep state {path}: ") and problem in message
    assert "\n" not in message


def test_a_state_file_that_is_not_a_regular_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / STATE_FILE)  # reading a FIFO would wait forever
    with pytest.raises(UsageError, match="it is not a regular file"):
        SweepState.load(tmp_path / STATE_FILE)


def test_deeply_nested_json_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UsageError, match="cannot read sweep state"):
        SweepState.load(tmp_path / STATE_FILE)


def test_files_written_before_the_slurm_fields_still_load(tmp_path: Path, valid: dict[str, Any]) -> None:
    document = copy.deepcopy(valid)
    for phase in document["runs"][0]["phases"]:
        del phase["slurm_job_id"], phase["ray_job_id"], phase["note"]
    (tmp_path / STATE_FILE).write_text(json.dumps(document))
    assert SweepState.load(tmp_path / STATE_FILE).runs[0].phases[0].slurm_job_id is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _places(value: Any, at: tuple = ()) -> list[tuple]:
    """Every path to a value inside a JSON document."""
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*at, index))
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), replacement=JSON)
def test_any_value_anywhere_loads_or_is_one_usage_error(
    tmp_path: Path, valid: dict[str, Any], data: st.DataObject, replacement: Any
) -> None:
    document = changed(valid, data.draw(st.sampled_from(_places(valid))), replacement)
    path = tmp_path / STATE_FILE
    path.write_text(json.dumps(document))
    try:
        state = SweepState.load(path)
    except UsageError as refused:
        assert str(refused).startswith(f"cannot read sweep state {path}: ") and "\n" not in str(refused)
    else:
        state.counts()  # a state that loads can be used
        for run in state.runs:
            run.refresh_status()
            assert run.phase("train").request
