"""`infoppo train --replay RUN`: the recorded plan rebuilt, differences shown, the same command."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.cli import app
from infoppo_cli.cli.console import console
from infoppo_cli.errors import UsageError
from infoppo_cli.train.plan import TrainRequest, plan_training
from infoppo_cli.train.replay import differences, read_recorded, replay_request
from infoppo_cli.train.run import manifest

runner = CliRunner()


@pytest.fixture
def recorded_run(tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(300)))
    out = tmp_path / "run"
    request = TrainRequest(
        preset="qwen3-4b", method="info-clip", data=str(data), output_dir=str(out), seed=3, gamma=0.99
    )
    plan = plan_training(request)
    out.mkdir()
    atomic_write_json(out / "manifest.json", manifest(plan, "finished"))
    return out, plan


def test_no_changes_give_the_byte_identical_command(recorded_run):
    out, original = recorded_run
    recorded = read_recorded(str(out))
    plan = plan_training(replay_request(recorded, []))
    assert shlex.join(plan.command()) == shlex.join(recorded.command) == shlex.join(original.command())
    assert differences(recorded, plan) == []


def test_a_set_change_is_shown_against_the_record(recorded_run):
    out, _ = recorded_run
    recorded = read_recorded(str(out))
    plan = plan_training(replay_request(recorded, ["actor.adam.lr=2e-6"]))
    assert differences(recorded, plan) == [("--actor.adam.lr", "1e-06", "2e-6")]
    assert plan.flags["algo.advantage.gamma"] == 0.99 and plan.flags["train.seed"] == 3


def test_changed_versions_and_commit_are_shown(recorded_run):
    out, _ = recorded_run
    body = json.loads((out / "manifest.json").read_text())
    body["versions"]["torch"] = "1.0.0"
    body["git_commit"] = "0" * 40
    (out / "manifest.json").write_text(json.dumps(body))
    recorded = read_recorded(str(out))
    rows = differences(recorded, plan_training(replay_request(recorded, [])))
    assert rows[0][:2] == ("version of torch", "1.0.0")
    assert rows[-1][:2] == ("git commit", "0" * 40)


def test_cli_replay_dry_run(recorded_run, monkeypatch):
    monkeypatch.setattr(console, "width", 300)
    out, original = recorded_run
    result = runner.invoke(app, ["train", "--replay", str(out), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "no differences from" in result.output and "--infotime.method info-clip" in result.output
    changed = runner.invoke(
        app, ["train", "--replay", str(out), "--dry-run", "--set", "rollout.temperature=0.9"]
    )
    assert changed.exit_code == 0 and "--rollout.temperature" in changed.output and "0.9" in changed.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "qwen3-8b"], "--replay takes its plan from the run; use --set instead of --preset"),
        (["--method", "ppo"], "use --set instead of --method"),
    ],
)
def test_replay_refuses_plan_options(recorded_run, args, message):
    out, _ = recorded_run
    result = runner.invoke(app, ["train", "--replay", str(out), "--dry-run", *args])
    assert isinstance(result.exception, UsageError) and message in str(result.exception)


def test_replay_of_a_directory_without_a_manifest(tmp_path):
    result = runner.invoke(app, ["train", "--replay", str(tmp_path), "--dry-run"])
    assert isinstance(result.exception, UsageError)
    assert "no manifest.json there" in str(result.exception)
    (tmp_path / "manifest.json").write_text("{")
    result = runner.invoke(app, ["train", "--replay", str(tmp_path), "--dry-run"])
    assert "is not a readable manifest" in str(result.exception)
