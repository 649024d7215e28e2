"""`infoppo train`'s options are TrainRequest's fields: declared once, with no paper value of their own."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing

import pytest

from infoppo_cli.cli.options import settings_options
from infoppo_cli.components import NORMS
from infoppo_cli.errors import UsageError
from infoppo_cli.schema import declaration, option_fields
from infoppo_cli.train.request import METHOD_SETTINGS, TrainRequest


def test_every_request_field_is_a_train_option_in_its_old_order():
    names = [field.name for field in dataclasses.fields(TrainRequest)]
    assert names[:3] == ["preset", "method", "methods_file"]  # TrainRequest("qwen3-4b", "ppo") still works
    assert [p.name for p in settings_options(TrainRequest)] == names
    assert all(declaration(field) for field in dataclasses.fields(TrainRequest))
    flags = option_fields(TrainRequest)
    assert flags["--lambda"] == flags["--lambd"] == "lambd" and flags["--set"] == "overrides"
    assert flags["--no-eval-before"] == "eval_before"


def test_the_norm_choices_are_the_registered_normalisations():
    norm = next(p for p in settings_options(TrainRequest) if p.name == "norm")
    choices, _ = typing.get_args(typing.get_args(norm.annotation)[0])  # Literal[...] | None
    assert typing.get_args(choices) == tuple(NORMS)


def test_every_method_setting_with_an_option_is_a_request_field_checked_by_its_declaration():
    names = {field.name for field in dataclasses.fields(TrainRequest)}
    assert {setting.name for setting in METHOD_SETTINGS} <= names
    assert "top_entropy_frac" in names and "overlong_buffer_frac" not in names  # a methods file's alone
    with pytest.raises(UsageError, match=r"^--top-entropy-frac must be in \(0.0, 1.0\], got 0.0$"):
        TrainRequest(preset="tiny-cpu", top_entropy_frac=0.0)
    with pytest.raises(UsageError, match=r"^unknown --norm 'bogus'; choose one of: global, batch, sentence$"):
        TrainRequest(preset="tiny-cpu", norm="bogus")
    with pytest.raises(UsageError, match=r"^unknown --wandb-mode 'nonsense'; choose one of: online,"):
        TrainRequest(preset="tiny-cpu", wandb_mode="nonsense")


@pytest.mark.parametrize("name", [setting.name for setting in METHOD_SETTINGS])
def test_method_settings_default_to_the_method_not_to_a_number(name):
    parameter = next(p for p in settings_options(TrainRequest) if p.name == name)
    help_text = typing.get_args(parameter.annotation)[1].help
    assert "(default: the method's; see `infoppo presets`)" in help_text
    assert not any(number in help_text for number in ("0.999", "0.99", "10", "20", "batch"))


def test_the_command_line_builds_its_options_without_torch():
    code = "import sys, infoppo_cli.train.request; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
