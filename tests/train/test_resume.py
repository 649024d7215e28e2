"""--resume's run-defining keys come from the settings' declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from infoppo_cli.components import SETTINGS
from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import Manifest
from infoppo_cli.train.resume import RUN_DEFINING, changed_settings, check_changes


def test_every_run_defining_setting_is_a_resume_key_read_where_its_value_lives():
    config = {"openrlhf_flags": {"algo.advantage.gamma": 0.9, "algo.advantage.lambd": 0.8}}
    config["infotime"] = {"top_entropy_frac": 0.2, "norm": "batch"}
    keys = {setting.key for setting in SETTINGS.values() if setting.run_defining}
    assert keys <= set(RUN_DEFINING) and "overlong_buffer_frac" not in RUN_DEFINING
    assert (RUN_DEFINING["gamma"](config), RUN_DEFINING["lambda"](config)) == (0.9, 0.8)
    assert (RUN_DEFINING["top_entropy_frac"](config), RUN_DEFINING["norm"](config)) == (0.2, "batch")


def test_a_changed_setting_is_refused_by_its_key_unless_overridden():
    old = {"infotime": {"top_entropy_frac": 0.2}}
    new = {"infotime": {"top_entropy_frac": 0.3}}
    assert changed_settings(old, new) == {"top_entropy_frac": (0.2, 0.3)}
    with pytest.raises(UsageError, match="trained with top_entropy_frac 0.2, this command asks for 0.3"):
        check_changes(Manifest(Path("run/manifest.json"), {"config": old}), new, [])
    assert check_changes(Manifest(Path("run/manifest.json"), {"config": old}), new, ["top_entropy_frac"]) == {
        "top_entropy_frac": [0.2, 0.3]
    }
