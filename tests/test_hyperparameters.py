"""The hyper-parameters' ranges: one-line messages, checked without torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from infoppo_cli.hyperparameters import validate_hyperparameters


def test_hyperparameter_checks_give_one_line_messages():
    for kwargs, name in [
        ({"gamma": 1.2}, "gamma"),
        ({"gamma": float("nan")}, "gamma"),
        ({"lambd": -0.1}, "lambd"),
        ({"eps_high": float("inf")}, "eps_high"),
        ({"top_frac": 0.0}, "top_frac"),
    ]:
        with pytest.raises(ValueError, match=name) as info:
            validate_hyperparameters(**kwargs)
        assert "\n" not in str(info.value)
    validate_hyperparameters(gamma=1.0, lambd=0.0, eps_low=0.0, eps_high=20.0, top_frac=1.0)


def test_the_checks_import_no_torch():
    code = "import sys, infoppo_cli.hyperparameters; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
