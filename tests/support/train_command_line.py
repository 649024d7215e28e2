"""What `infoppo train` makes of a command line: the request it would plan, caught before planning."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

from infoppo_cli.train.request import TrainRequest


def parsed_by_train(argv: list[str]) -> TrainRequest:
    """The request `infoppo train` builds from ``argv`` (``infoppo train ...``), parsed by the command
    itself; nothing is planned or run."""
    from infoppo_cli.cli import main

    seen = []

    def caught(request: TrainRequest, **_: Any) -> None:
        seen.append(request)
        raise SystemExit(0)

    assert argv[:2] == ["infoppo", "train"], argv
    with mock.patch("infoppo_cli.train.plan.plan_training", caught), pytest.raises(SystemExit):
        main(argv[1:])
    assert len(seen) == 1, argv
    return seen[0]


def request_of(argv: list[str]) -> TrainRequest:
    """The request of an ``infoppo train`` command line (``infoppo train ...`` or its options), read by
    the train command's own parser (click's, built from the request's declarations) and checked as a
    typed one is; nothing is planned. Usable outside pytest (the sweep tests' stand-in program)."""
    import typer.main

    from infoppo_cli.cli.entry import app
    from infoppo_cli.cli.options import given_fields

    options = list(argv[2:]) if list(argv[:2]) == ["infoppo", "train"] else list(argv)
    train = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]
    params = train.make_context("train", options).params
    given = {key: list(value) if isinstance(value, tuple) else value for key, value in params.items()}
    return TrainRequest(
        **given_fields({key: value for key, value in given.items() if value != []}, TrainRequest)
    )
