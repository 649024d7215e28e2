"""Flags are rendered for, and validated by, OpenRLHF 0.11.2's own parser."""

from __future__ import annotations

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser, parse_set_option, render, validate


def test_the_parser_is_openrlhfs():
    args = openrlhf_parser().parse_args([])
    assert vars(args)["algo.advantage.gamma"] == 1 and vars(args)["algo.advantage.estimator"] == "gae"
    assert vars(args)["rollout.n_samples_per_prompt"] == 1 and vars(args)["actor.eps_clip_low_high"] is None
    flags = {opt for action in openrlhf_parser()._actions for opt in action.option_strings}
    assert {"--reward.remote_url", "--ckpt.load_enable", "--train.async_enable"} <= flags


def test_render():
    flags = {"a.b": True, "c.d": False, "e.f": None, "g.h": [0.2, 0.28], "i.j": 1e-6, "k": "x y"}
    assert render(flags) == ["--a.b", "--g.h", "0.2", "0.28", "--i.j", "1e-06", "--k", "x y"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("rollout.n_samples_per_prompt=8", ("rollout.n_samples_per_prompt", "8")),
        ("--ds.packing_samples=false", ("ds.packing_samples", False)),
        ("vllm.enforce_eager=TRUE", ("vllm.enforce_eager", True)),
        ("actor.eps_clip_low_high=0.1, 0.3", ("actor.eps_clip_low_high", ["0.1", "0.3"])),
        ("logger.wandb.run_name=a=b", ("logger.wandb.run_name", "a=b")),
    ],
)
def test_parse_set_option(text, expected):
    assert parse_set_option(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("rollout.n_sample_per_prompt=8", "did you mean --rollout.n_samples_per_prompt?"),
        ("=3", "expects KEY=VALUE"),
        ("ds.packing_samples=maybe", "is a switch"),
    ],
)
def test_parse_set_option_errors(text, message):
    with pytest.raises(UsageError, match=message.replace("?", r"\?")):
        parse_set_option(text)


def test_validate_rejects_what_openrlhf_rejects():
    assert vars(validate(["--algo.advantage.gamma", "0.9"]))["algo.advantage.gamma"] == 0.9
    with pytest.raises(UsageError, match="invalid float value") as info:
        validate(["--algo.advantage.gamma", "high"])
    assert "\n" not in str(info.value)
    with pytest.raises(UsageError, match="invalid choice"):
        validate(["--algo.advantage.estimator", "ppo2"])
    with pytest.raises(UsageError, match="expected 2 arguments"):
        validate(["--actor.eps_clip_low_high", "0.2"])
