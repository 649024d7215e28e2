"""`infoppo train --replay RUN`: the recorded plan rebuilt, differences shown, the same command."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.cli import app
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
        preset="qwen3-4b",
        method="info-clip",
        data=str(data),
        output_dir=str(out),
        seed=3,
        gamma=0.99,
        steps=7,
        eval_bench="none",
    )
    plan = plan_training(request)
    out.mkdir()
    atomic_write_json(out / "manifest.json", manifest(plan, "finished"))
    return out, plan


def test_no_changes_give_the_byte_identical_command(recorded_run):
    out, original = recorded_run
    recorded = read_recorded(str(out))
    plan = plan_training(replay_request(recorded, [], str(out)))  # into its own directory, as recorded
    assert shlex.join(plan.command()) == shlex.join(recorded.command) == shlex.join(original.command())
    assert differences(recorded, plan) == []


def test_a_replay_goes_beside_the_run_unless_it_resumes_it(recorded_run):
    out, _ = recorded_run
    recorded = read_recorded(str(out))
    assert replay_request(recorded, []).output_dir == str(out.parent / "run-replay")
    (out.parent / "run-replay").mkdir()
    assert replay_request(recorded, []).output_dir == str(out.parent / "run-replay2")
    assert replay_request(recorded, [], resume=True).output_dir == str(out)  # --resume continues the run
    plan = plan_training(replay_request(recorded, []))
    changed = {what for what, _, _ in differences(recorded, plan)}  # only the run directory's paths
    assert changed == {
        "--ckpt.output_dir",
        "--ckpt.path",
        "--logger.tensorboard_dir",
        "--logger.wandb.run_name",
        "infoppo's metrics_path",  # the run configuration's
    }


def test_a_set_change_is_shown_against_the_record(recorded_run):
    out, _ = recorded_run
    recorded = read_recorded(str(out))
    plan = plan_training(replay_request(recorded, ["actor.adam.lr=2e-6"], str(out)))
    assert differences(recorded, plan) == [("--actor.adam.lr", "1e-06", "2e-6")]
    assert plan.flags["algo.advantage.gamma"] == 0.99 and plan.flags["train.seed"] == 3


def test_changed_versions_and_commit_are_shown(recorded_run):
    out, _ = recorded_run
    body = json.loads((out / "manifest.json").read_text())
    body["versions"]["torch"] = "1.0.0"
    body["git_commit"] = "0" * 40
    (out / "manifest.json").write_text(json.dumps(body))
    recorded = read_recorded(str(out))
    rows = differences(recorded, plan_training(replay_request(recorded, [], str(out))))
    assert rows[0][:2] == ("version of torch", "1.0.0")
    assert rows[-1][:2] == ("git commit", "0" * 40)


def test_cli_replay_dry_run(recorded_run, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    out, original = recorded_run
    again = ["--output-dir", str(out.parent / "again")]  # its own directory holds the recorded run
    result = runner.invoke(app, ["train", "--replay", str(out), "--dry-run", *again])
    assert result.exit_code == 0, result.output
    assert "no differences from" not in result.output  # the output directory differs
    assert 'method = "info-clip"' in result.output and "rl_steps = " in result.output
    beside = runner.invoke(app, ["train", "--replay", str(out), "--dry-run"])  # the documented example
    assert beside.exit_code == 0, beside.output
    assert "error" not in beside.output and str(out.parent / "run-replay") in beside.output
    in_place = runner.invoke(app, ["train", "--replay", str(out), "--dry-run", "--output-dir", str(out)])
    plan, _, error = in_place.output.partition("error: ")  # after the plan, as every dry run's problem
    assert in_place.exit_code == 2 and "OpenRLHF invocation:" in plan and "already holds a run" in error
    changed = runner.invoke(
        app, ["train", "--replay", str(out), "--dry-run", *again, "--set", "rollout.temperature=0.9"]
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


def _edited(out, edit) -> None:
    body = json.loads((out / "manifest.json").read_text())
    edit(body)
    (out / "manifest.json").write_text(json.dumps(body))


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda b: b.clear() or b.update({"config": []}), "config is missing or not an object"),
        (lambda b: b["config"].update(request={}), "config.request is missing, empty or not an object"),
        (lambda b: b["config"].pop("openrlhf_flags"), "config.openrlhf_flags is missing"),
        (lambda b: b["config"]["request"].pop("preset"), "config.request.preset is missing"),
        (
            lambda b: b["config"]["request"].update(seed="abc"),
            'config.request.seed = "abc" is not an integer',
        ),
        (lambda b: b["config"]["request"].update(seed=True), "config.request.seed = true is not an integer"),
        (
            lambda b: b["config"]["request"].update(overrides="rollout.batch_size=8"),
            'config.request.overrides = "rollout.batch_size=8" is not a list of strings',
        ),
        (
            lambda b: b["config"]["request"].update(overrides=["rollout.batch_size=8.5"]),
            "config.request.overrides holds 'rollout.batch_size=8.5'",
        ),
        (lambda b: b["config"]["request"].update(gamma="high"), "config.request.gamma"),
        (lambda b: b["config"]["request"].update(resume="no"), "config.request.resume"),
        (
            lambda b: b["config"]["openrlhf_flags"].pop("ckpt.path"),
            "config.openrlhf_flags.ckpt.path is missing",
        ),
        (
            lambda b: b["config"]["openrlhf_flags"].update({"train.seed": "3"}),
            "config.openrlhf_flags.train.seed",
        ),
        (lambda b: b.update(command="python -m x"), "command is missing or not a list of strings"),
        (lambda b: b.update(versions=["torch"]), "versions is not an object"),
    ],
)
def test_a_manifest_of_the_wrong_shape_names_the_file_and_the_field(recorded_run, edit, field):
    out, _ = recorded_run
    _edited(out, edit)
    result = runner.invoke(app, ["train", "--replay", str(out), "--dry-run"])
    assert isinstance(result.exception, UsageError), result.output
    message = str(result.exception)
    assert f"{out / 'manifest.json'} is not an infoppo train manifest: {field}" in message
    assert "\n" not in message


def test_a_manifest_that_is_not_an_object(tmp_path):
    (tmp_path / "manifest.json").write_text("[1, 2]")
    with pytest.raises(UsageError, match="is not an infoppo train manifest: it is not a JSON object"):
        read_recorded(str(tmp_path))


def test_a_new_set_replaces_the_recorded_one_and_a_new_seed_the_recorded_seed(recorded_run):
    out, _ = recorded_run
    _edited(out, lambda b: b["config"]["request"].update(overrides=["rollout.temperature=0.9"]))
    recorded = read_recorded(str(out))
    request = replay_request(recorded, ["rollout.temperature=0.8", "train.seed=5"])
    assert request.overrides == ["rollout.temperature=0.8", "train.seed=5"] and request.seed is None
    kept = replay_request(recorded, ["actor.adam.lr=2e-6"])
    assert kept.overrides == ["rollout.temperature=0.9", "actor.adam.lr=2e-6"] and kept.seed == 3


def test_a_replay_keeps_the_run_length_unless_steps_change_it(recorded_run):
    out, _ = recorded_run
    recorded = read_recorded(str(out))
    assert plan_training(replay_request(recorded, [])).infotime["rl_steps"] == 7
    again = str(out.parent / "again")
    result = runner.invoke(
        app, ["train", "--replay", str(out), "--dry-run", "--output-dir", again, "--steps", "9"]
    )
    assert result.exit_code == 0, result.output
    assert "rl_steps = 9" in result.output
