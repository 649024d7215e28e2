"""The one command line of a training request: :func:`train_argv` writes it, `infoppo train` (and
:func:`request_from_argv`) read it back into the same request."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from train_command_line import parsed_by_train

from infoppo_cli.errors import UsageError
from infoppo_cli.schema import declaration, unwrap_optional
from infoppo_cli.train.request import TrainRequest, request_from_argv, train_argv

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_./=", min_size=1, max_size=12)
"""A value as a user gives one: a name, a path, KEY=VALUE (never starting with a dash)."""


def _values(field: dataclasses.Field, kind: typing.Any) -> st.SearchStrategy:
    choices = (declaration(field) or {}).get("cli_type")
    if typing.get_origin(choices) is typing.Literal:
        return st.sampled_from(typing.get_args(choices))
    if typing.get_origin(kind) is list:
        return st.lists(WORD, max_size=3)
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
    assert request_from_argv(argv) == request


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


def test_any_spelling_is_read_and_an_unknown_option_is_refused() -> None:
    typed = ["infoppo", "train", "-p", "x", "--lambd=0.9", "--set", "a=1", "--no-eval-before", "--seed", "3"]
    assert request_from_argv(typed) == TrainRequest(
        "x", lambd=0.9, overrides=["a=1"], eval_before=False, seed=3
    )
    with pytest.raises(UsageError, match="no such option: --verbose"):
        request_from_argv(["--preset", "x", "--verbose"])
    with pytest.raises(UsageError, match="--steps takes an integer, got 'many'"):
        request_from_argv(["--preset", "x", "--steps", "many"])
    with pytest.raises(UsageError, match="--seed needs a value"):
        request_from_argv(["--preset", "x", "--seed"])
