"""Tracking names and wandb's mode: our project, group and run name (never upstream's timestamp), in the
plan and on OpenRLHF's command line; TensorBoard under the run directory by run name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.request import SweepRequest
from infoppo_cli.train.plan import TrainRequest, plan_training
from infoppo_cli.train.summary import summary_rows
from infoppo_cli.train.tracking import default_run_name


@pytest.fixture
def data(tmp_path: Path) -> str:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(64)))
    return str(path)


@pytest.fixture(autouse=True)
def no_wandb_key(monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("NETRC", "/nonexistent/netrc")  # no `wandb login` of this machine's user


def plan(data: str, out: Path, strict: bool = True, **options):
    request = TrainRequest(preset="qwen3-4b", data=data, output_dir=str(out), eval_bench="none", **options)
    return plan_training(request, strict_data=strict)


def test_the_default_run_name_is_the_run_directory_with_the_method_once():
    assert default_run_name(Path("runs/qwen3-4b-ppo-seed42"), "ppo") == "qwen3-4b-ppo-seed42"
    assert default_run_name(Path("runs/qwen3-4b-info-gae-seed1"), "info-gae") == "qwen3-4b-info-gae-seed1"
    assert (
        default_run_name(Path("sweeps/x/gamma-0.99-info-seed1"), "infoppo") == "gamma-0.99-info-seed1-infoppo"
    )
    assert default_run_name(Path("runs/mine"), "dapo") == "mine-dapo"


def test_default_names_reach_openrlhf_and_tensorboard_goes_under_the_run_by_name(data, tmp_path):
    chosen = plan(data, tmp_path / "baseline", method="ppo")
    flags = chosen.flags
    assert flags["logger.wandb.project"] == "infoppo" and "logger.wandb.group" not in flags
    assert flags["logger.wandb.run_name"] == "baseline-ppo"  # not OpenRLHF's ppo_<date>T<time>
    argv = chosen.openrlhf_argv()
    assert argv[argv.index("--logger.wandb.run_name") + 1] == "baseline-ppo"
    rows = dict(summary_rows(chosen))
    assert rows["TensorBoard"] == str(tmp_path / "baseline" / "tensorboard" / "baseline-ppo")
    assert rows["wandb"].startswith("off")


def test_the_options_name_the_run_and_show_in_the_plan(data, tmp_path):
    chosen = plan(
        data,
        tmp_path / "r",
        wandb_project="lab",
        wandb_group="ablation-3",
        run_name="first-try",
        wandb_mode="offline",
    )
    flags = chosen.flags
    assert (flags["logger.wandb.project"], flags["logger.wandb.group"]) == ("lab", "ablation-3")
    assert flags["logger.wandb.run_name"] == "first-try"
    assert flags["logger.wandb.key"] == "env:WANDB_API_KEY"  # offline needs no key; the pointer turns it on
    assert chosen.tracking_env == {"WANDB_DIR": str(tmp_path / "r"), "WANDB_MODE": "offline"}
    assert dict(summary_rows(chosen))["wandb"] == "offline: project lab, group ablation-3, run first-try"
    assert dict(summary_rows(chosen))["TensorBoard"].endswith("r/tensorboard/first-try")


def test_disabled_keeps_wandb_off_even_with_a_key(data, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "k" * 40)
    chosen = plan(data, tmp_path / "r", wandb_mode="disabled")
    assert not chosen.flags.get("logger.wandb.key") and "--logger.wandb.key" not in chosen.openrlhf_argv()
    assert chosen.tracking_env == {"WANDB_MODE": "disabled"}
    assert dict(summary_rows(chosen))["wandb"] == "off (--wandb-mode disabled)"


def test_online_without_a_key_is_refused_at_launch_and_reported_by_a_dry_run(data, tmp_path):
    with pytest.raises(UsageError, match="--wandb-mode online needs a wandb API key"):
        plan(data, tmp_path / "r", wandb_mode="online")
    dry = plan(data, tmp_path / "r", strict=False, wandb_mode="online")
    assert [p for p in dry.problems if "needs a wandb API key" in p]


def test_online_with_a_key_and_no_server_is_a_problem_not_an_offline_run(data, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "k" * 40)
    monkeypatch.setattr("infoppo_cli.data.hub.probe", lambda endpoint, timeout=3.0: "ConnectError: down")
    dry = plan(data, tmp_path / "r", strict=False, wandb_mode="online")
    assert dry.tracking_env["WANDB_MODE"] == "online"
    assert dry.problems == [
        "--wandb-mode online: https://api.wandb.ai does not answer (ConnectError: down); use --wandb-mode "
        "offline to log under the run directory and `wandb sync` it later"
    ]
    default = plan(data, tmp_path / "r2")  # without --wandb-mode: offline, with a warning, as before
    assert default.tracking_env["WANDB_MODE"] == "offline" and "logs to wandb offline" in default.warnings[-1]


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ({"run_name": "a/b"}, "--run-name 'a/b' cannot name a directory under RUN/tensorboard"),
        ({"run_name": ".."}, "cannot name a directory"),
        ({"wandb_project": " "}, "--wandb-project is empty"),
        ({"wandb_mode": "sometimes"}, "unknown --wandb-mode 'sometimes'"),
        (
            {"run_name": "x", "overrides": ["logger.wandb.run_name=y"]},
            "--run-name x and --set logger.wandb.run_name=y disagree",
        ),
    ],
)
def test_bad_tracking_options_are_refused(data, tmp_path, options, refusal):
    with pytest.raises(UsageError, match=refusal.replace("(", r"\(").replace(".", r"\.")):
        plan(data, tmp_path / "r", **options)


def test_a_set_alone_still_names_the_run(data, tmp_path):
    chosen = plan(data, tmp_path / "r", overrides=["logger.wandb.run_name=mine"])
    assert chosen.flags["logger.wandb.run_name"] == "mine"


def test_a_sweep_groups_its_points_and_names_each_run_after_its_point(tmp_path):
    from infoppo_cli.sweep.grid import build_plan

    grid = build_plan("gamma", preset="qwen3-4b", out_dir=tmp_path / "gamma-qwen3-4b", values=["0.99"])
    point = grid.points[0]
    command = grid.train_command(point)
    assert command[command.index("--wandb-group") + 1] == "gamma-qwen3-4b"
    assert command[command.index("--run-name") + 1] == point.name == "gamma-0.99-info-seed1"
    request = grid.train_request(point)
    assert (request.wandb_group, request.run_name) == ("gamma-qwen3-4b", point.name)

    tracked = build_plan(
        "gamma",
        preset="qwen3-4b",
        out_dir=tmp_path / "s",
        values=["0.99"],
        train_options={"wandb_project": "lab", "wandb_group": "g", "wandb_mode": "offline"},
        run_name_prefix="v2",
    )
    named = tracked.train_request(point)
    assert (named.wandb_project, named.wandb_group, named.wandb_mode) == ("lab", "g", "offline")
    assert named.run_name == f"v2-{point.name}"
    resumed = SweepRequest().resume_command(tracked)
    assert resumed[resumed.index("--wandb-project") + 1] == "lab"
    assert resumed[resumed.index("--run-name-prefix") + 1] == "v2"
