"""The one command line of a training request: :func:`train_argv` writes it, `infoppo train` reads it back
into the same request; a recorded request (a sweep's) is checked as a typed one is."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from train_command_line import parsed_by_train

from infoppo_cli.components import SETTINGS
from infoppo_cli.errors import UsageError
from infoppo_cli.schema import declaration, unwrap_optional
from infoppo_cli.train.request import TrainRequest, recorded_request, train_argv

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_./=", min_size=1, max_size=12)
"""A value as a user gives one: a name, a path, KEY=VALUE (never starting with a dash)."""


def _values(field: dataclasses.Field, kind: typing.Any) -> st.SearchStrategy:
    choices = (declaration(field) or {}).get("cli_type")
    if typing.get_origin(choices) is typing.Literal:
        return st.sampled_from(typing.get_args(choices))
    if typing.get_origin(kind) is list:
        return st.lists(WORD, max_size=3)
    declared = SETTINGS.get(field.name)
    if declared is not None and declared.range is not None:  # a method setting: within its range
        low, high = declared.range.low, declared.range.high
        return st.floats(low, 1e6 if high is None else high, exclude_min=declared.range.low_open)
    limits = (declaration(field) or {}).get("limits")  # a value the request accepts
    least, most = (limits.least, limits.most or 10**6) if limits else (0, 10**6)
    return {
        bool: st.booleans(),
        int: st.integers(min_value=least, max_value=most),
        float: st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
    }.get(kind, WORD)


def requests() -> st.SearchStrategy[TrainRequest]:
    """Any request the command line can give: every field given or not (``None``, its default)."""
    hints = typing.get_type_hints(TrainRequest)
    fields = {}
    for field in dataclasses.fields(TrainRequest):
        values = _values(field, unwrap_optional(hints[field.name]))
        fields[field.name] = values if field.name == "preset" else st.one_of(st.none(), values)
    return st.fixed_dictionaries(fields).map(
        lambda chosen: TrainRequest(**{name: value for name, value in chosen.items() if value is not None})
    )


@settings(max_examples=60, deadline=None)
@given(requests())
def test_the_train_command_reads_a_request_s_command_line_back_into_it(request: TrainRequest) -> None:
    argv = train_argv(request)
    assert parsed_by_train(argv) == request
    assert recorded_request(dataclasses.asdict(request), "recorded") == request


def test_the_command_line_is_the_options_a_user_would_type() -> None:
    request = TrainRequest("qwen3-4b", "ppo", gamma=0.999, lambd=1.0, overrides=["a=1", "b=2"])
    request.eval_before, request.resume, request.steps = False, True, 3
    assert train_argv(request) == [
        "infoppo", "train", "--preset", "qwen3-4b", "--method", "ppo", "--gamma", "0.999", "--lambda", "1.0",
        "--resume", "--set", "a=1", "--set", "b=2", "--steps", "3", "--no-eval-before",
    ]  # fmt: skip
    assert train_argv(TrainRequest("tiny-cpu")) == [
        "infoppo",
        "train",
        "--preset",
        "tiny-cpu",
        "--method",
        "infoppo",
    ]


def test_a_recorded_request_is_refused_by_the_rules_of_a_typed_one() -> None:
    with pytest.raises(UsageError, match=r"^run x: unknown --norm 'bogus'; choose one of: global, batch,"):
        recorded_request({"preset": "tiny-cpu", "norm": "bogus"}, "run x")
    with pytest.raises(UsageError, match=r"^run x: unknown --wandb-mode 'nonsense'"):
        recorded_request({"preset": "tiny-cpu", "wandb_mode": "nonsense"}, "run x")
    with pytest.raises(UsageError, match=r"^run x: --gamma must be in \(0.0, 1.0\], got 2.5$"):
        recorded_request({"preset": "tiny-cpu", "gamma": 2.5}, "run x")
    with pytest.raises(UsageError, match=r"^run x: 'verbose' is not an option of infoppo train$"):
        recorded_request({"preset": "tiny-cpu", "verbose": True}, "run x")
