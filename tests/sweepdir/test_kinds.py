"""The sweep kinds, below report/: their symbols label a sweep's runs, and their values are checked by the
declarations of the settings they vary."""

from __future__ import annotations

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.report.curves import KIND_SYMBOLS
from infoppo_cli.sweepdir.kinds import KINDS, parse_values


def test_report_labels_every_kind_by_the_kind_s_own_symbol():
    assert {name: kind.symbol for name, kind in KINDS.items()} == KIND_SYMBOLS
    assert (KIND_SYMBOLS["gamma"], KIND_SYMBOLS["lambda"], KIND_SYMBOLS["clip"]) == ("γ", "λ", "ε")


@pytest.mark.parametrize(
    "kind, value, problem",
    [
        ("gamma", "1.5", "--gamma must be in (0.0, 1.0], got 1.5"),
        ("lambda", "nan", "--lambd must be in [0.0, 1.0], got nan"),
        ("clip", "5:-1", "--eps-high-info must be a finite number >= 0, got -1.0"),
    ],
)
def test_a_value_is_refused_by_the_declaration_of_the_setting_it_gives(kind, value, problem):
    with pytest.raises(UsageError) as refused:
        parse_values(kind, [value])
    assert str(refused.value).endswith(f"({problem})")


def test_values_in_range_are_parsed_per_setting():
    assert parse_values("clip", ["5:10"]) == ((5.0, 10.0),)
    assert parse_values("norm", ["sentence,batch"]) == ("sentence", "batch")
