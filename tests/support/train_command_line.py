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
