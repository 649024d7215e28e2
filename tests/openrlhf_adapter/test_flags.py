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


def test_secret_values_are_redacted_in_every_form():
    from infoppo_cli.openrlhf_adapter.flags import redact_argv, secrets_in_argv

    argv = [
        "--set",
        "logger.wandb.key=s3cr=t",
        "--set=logger.wandb.key=s3cret",
        "--logger.wandb.key",
        "s3cret",
    ]
    argv += ["logger.wandb.key=s3cret", "--set", "rollout.batch_size=3", "--logger.wandb.project", "p"]
    redacted = redact_argv(argv)
    assert not any("s3cr" in token for token in redacted)
    assert redacted[:2] == ["--set", "logger.wandb.key=<redacted>"] and redacted[-4:] == argv[-4:]
    assert secrets_in_argv(argv) == {"WANDB_API_KEY": "s3cret"}  # the last one given
    assert secrets_in_argv(["--set", "logger.wandb.key=s3cr=t"]) == {"WANDB_API_KEY": "s3cr=t"}
    assert secrets_in_argv(redacted) == {}


def test_a_wandb_key_moves_to_the_environment():
    from infoppo_cli.openrlhf_adapter.flags import secrets_to_environment

    flags = {"logger.wandb.key": "s3cret"}
    assert secrets_to_environment(flags, {}) == {"WANDB_API_KEY": "s3cret"}
    assert flags == {"logger.wandb.key": "env:WANDB_API_KEY"}
    flags = {}
    assert secrets_to_environment(flags, {"WANDB_API_KEY": "k"}) == {}  # wandb reads it itself
    assert flags == {"logger.wandb.key": "env:WANDB_API_KEY"}
    flags = {"logger.wandb.key": "<redacted>"}  # a manifest replayed: the key must come from the env
    assert secrets_to_environment(flags, {}) == {} and flags["logger.wandb.key"] == "env:WANDB_API_KEY"
    assert secrets_to_environment(empty := {}, {}) == {} and empty == {}


def test_the_plan_manifest_and_printed_command_never_hold_the_key(tmp_path, monkeypatch):
    import json

    from infoppo_cli.train.plan import TrainRequest, plan_training
    from infoppo_cli.train.run import invocation_text, manifest

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(64)))
    request = TrainRequest("qwen3-4b", "ppo", data=str(data), output_dir=str(tmp_path / "run"))
    request.overrides = ["logger.wandb.key=s3cret-key"]
    plan = plan_training(request)
    assert plan.secret_env == {"WANDB_API_KEY": "s3cret-key"}
    shown = json.dumps(manifest(plan, "running")) + invocation_text(plan) + repr(plan)
    assert "s3cret" not in shown and "env:WANDB_API_KEY" in invocation_text(plan)
    assert plan.request.overrides == ["logger.wandb.key=<redacted>"]


def test_a_sweep_records_and_passes_on_no_key(tmp_path):
    import json

    from infoppo_cli.sweep.grid import build_plan
    from infoppo_cli.sweep.request import SweepRequest

    given = {"overrides": ["logger.wandb.key=s3cret", "rollout.batch_size=8"]}
    options, secrets = SweepRequest().train_options(given)
    assert secrets == {"WANDB_API_KEY": "s3cret"}
    plan = build_plan("gamma", preset="qwen3-4b", out_dir=tmp_path, values=["0.99"], train_options=options)
    recorded = json.dumps(plan.settings()) + json.dumps(SweepRequest().resume_command(plan))
    recorded += json.dumps([plan.train_command(point) for point in plan.points])
    assert "s3cret" not in recorded and "rollout.batch_size=8" in recorded
