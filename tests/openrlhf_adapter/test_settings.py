"""One components type for methods and the adapter's settings; no paper value fills a missing setting."""

from __future__ import annotations

import dataclasses

import pytest
from openrlhf_fixtures import method_settings

from infoppo_cli.components import KINDS
from infoppo_cli.openrlhf_adapter.settings import Components, InfoSettings
from infoppo_cli.train.methods import Method, methods


def test_methods_and_settings_share_the_components_type():
    assert issubclass(Method, Components) and issubclass(InfoSettings, Components)
    names = [field.name for field in dataclasses.fields(Components)]
    assert names == list(KINDS)


@pytest.mark.parametrize("name", list(methods()))
def test_a_method_s_settings_behave_as_the_method(name):
    chosen, settings = methods()[name], method_settings(name)
    for prop in ("uses_critic", "uses_rho", "reward_values", "adam_betas"):
        assert getattr(settings, prop) == getattr(chosen, prop)
    assert set(chosen.needed_settings()) <= set(chosen.infotime)


@pytest.mark.parametrize(
    ("parts", "missing"),
    [
        ({"clip": "adaptive"}, "eps_low_info, eps_high_info, norm"),
        ({"advantage": "info_time_gae"}, "norm"),
        ({"token_mask": "top_entropy"}, "top_entropy_frac"),
    ],
)
def test_a_setting_a_component_reads_has_no_default(parts, missing):
    base = {
        "advantage": "gae",
        "clip": "fixed",
        "token_mask": "all",
        "reward": "binary",
        "optimizer": "openrlhf",
    }
    with pytest.raises(ValueError, match=f"lacks the setting\\(s\\) {missing}"):
        InfoSettings(**{**base, **parts}, method="mine")
    assert InfoSettings(**base).norm is None  # token-time PPO reads none of them


def test_the_trainer_s_settings_hold_every_method_setting_infoppo_carries():
    import dataclasses

    from infoppo_cli.components import SETTINGS

    names = {field.name for field in dataclasses.fields(InfoSettings)}
    ours = {setting.name for setting in SETTINGS.values() if setting.openrlhf is None}
    assert ours <= names and "gamma" not in names  # gamma travels as OpenRLHF's own flag
