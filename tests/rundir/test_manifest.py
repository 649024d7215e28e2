"""manifest.json: built for each launch, one writer, one reader, and one error naming the file and the
field."""

from __future__ import annotations

import json
import subprocess

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import (
    RunDir,
    ended,
    launch_fields,
    new_manifest,
    read_manifest,
    restore_manifest,
    trained_response_length,
    write_manifest,
)
from infoppo_cli.rundir.manifest import UNCOMMITTED, git_commit

RECORD = {
    "config": {
        "method": "ppo",
        "model": "Qwen/Qwen3-4B-Base",
        "request": {"preset": "qwen3-4b"},
        "openrlhf_flags": {"rollout.max_new_tokens": 8192, "ckpt.path": "/r/ckpt"},
    },
    "command": ["python", "-m", "x"],
    "versions": {"infoppo": "0.1.0"},
    "git_commit": None,
    "seed": 3,
    "status": "finished",
    "start_time": "2026-01-01T00:00:00+00:00",
}


def test_what_is_written_is_read_back(tmp_path):
    run = RunDir(tmp_path)
    assert read_manifest(run) is None  # none yet
    write_manifest(run, RECORD)
    manifest = read_manifest(run)
    assert manifest.record == RECORD and manifest.path == run.manifest
    assert (manifest.method, manifest.model, manifest.seed, manifest.status) == (
        "ppo",
        "Qwen/Qwen3-4B-Base",
        3,
        "finished",
    )
    assert manifest.section("request") == {"preset": "qwen3-4b"} and manifest.command == ["python", "-m", "x"]
    assert manifest.flag("ckpt.path", str) == "/r/ckpt" and manifest.flag("absent") is None
    assert manifest.git_commit is None and manifest.versions == {"infoppo": "0.1.0"}
    assert read_manifest(run.manifest).record == RECORD  # the file itself names it too


def test_a_model_is_evaluated_with_the_length_it_trained_with(tmp_path):
    run = RunDir(tmp_path / "run")
    run.final.mkdir(parents=True)
    write_manifest(run, RECORD)
    assert trained_response_length(run.final) == 8192
    write_manifest(run, {"config": {"method": "ppo"}})  # not recorded: the eval's own default
    assert trained_response_length(run.final) is None
    assert trained_response_length("Qwen/Qwen3-4B-Base") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{torn", "manifest.json is not a readable manifest"),
        (b"\xff\xfe", "manifest.json is not a readable manifest"),
        ("[1, 2]", "manifest.json is not an infoppo train manifest: it is not a JSON object"),
    ],
)
def test_an_unreadable_manifest_is_one_usage_error(tmp_path, text, message):
    run = RunDir(tmp_path)
    if isinstance(text, bytes):
        run.manifest.write_bytes(text)
    else:
        run.manifest.write_text(text)
    with pytest.raises(UsageError, match=message) as info:
        read_manifest(run)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("change", "ask", "field"),
    [
        ({"config": []}, lambda m: m.config, "config is missing or not an object"),
        ({"config": []}, lambda m: m.method, "config is not an object"),
        ({"config": {"request": {}}}, lambda m: m.section("request"), "config.request is missing, empty"),
        ({"config": {"method": 5}}, lambda m: m.method, "config.method = 5 is not a string"),
        ({"seed": True}, lambda m: m.seed, "seed = true is not an integer"),
        ({"seed": "3"}, lambda m: m.seed, 'seed = "3" is not an integer'),
        ({"command": "python x"}, lambda m: m.command, "command is missing or not a list of strings"),
        ({"versions": ["torch"]}, lambda m: m.versions, "versions is not an object"),
        ({"git_commit": 12}, lambda m: m.git_commit, "git_commit is not a string"),
        (
            {"config": {"openrlhf_flags": {"rollout.max_new_tokens": "long"}}},
            lambda m: m.flag("rollout.max_new_tokens", int),
            'config.openrlhf_flags.rollout.max_new_tokens = "long" is not an integer',
        ),
        (
            {"config": {}},
            lambda m: m.get("config", "openrlhf_flags", "ckpt.path", required=True),
            "config.openrlhf_flags.ckpt.path is missing",
        ),
    ],
)
def test_a_field_of_the_wrong_shape_names_the_file_and_the_field(tmp_path, change, ask, field):
    run = RunDir(tmp_path)
    run.manifest.write_text(json.dumps({**RECORD, **change}))
    with pytest.raises(UsageError) as info:
        ask(read_manifest(run))
    assert str(info.value).startswith(f"{run.manifest} is not an infoppo train manifest: {field}")


def test_a_manifest_without_optional_fields_reads_as_absent(tmp_path):
    run = RunDir(tmp_path)
    write_manifest(run, {})
    manifest = read_manifest(run)
    assert (manifest.method, manifest.model, manifest.seed, manifest.status, manifest.start_time) == (
        None,
    ) * 5
    assert manifest.versions == {} and manifest.git_commit is None


HUB_BASE = {"hub_id": "Qwen/Qwen3-4B-Base", "revision": None}


def test_a_new_run_is_built_with_its_launch(tmp_path):
    launch = launch_fields(None, "T1", "infoppo train --preset x", {}, HUB_BASE)
    record = new_manifest({"method": "ppo"}, ["python", "-m", "x"], 3, "running", **launch)
    assert list(record) == [
        "config",
        "command",
        "versions",
        "git_commit",
        "seed",
        "status",
        "start_time",
        "last_start_time",
        "infoppo_command",
        "base_model",
    ]
    assert (record["seed"], record["status"], record["start_time"], record["last_start_time"]) == (
        3,
        "running",
        "T1",
        "T1",
    )
    assert record["infoppo_command"] == "infoppo train --preset x" and "infoppo" in record["versions"]
    finished = ended(record, "finished", 0)
    assert list(finished)[-2:] == ["end_time", "exit_code"] and finished["status"] == "finished"
    assert record["status"] == "running"  # the launch's record is left as it was


def test_a_resume_keeps_the_first_start_command_and_revision_and_adds_itself(tmp_path):
    run = RunDir(tmp_path)
    first = launch_fields(None, "T1", "infoppo train", {}, {**HUB_BASE, "revision": "abc"})
    write_manifest(run, new_manifest({}, ["x"], 0, "failed", **first))
    previous = read_manifest(run)
    resumed = launch_fields(previous, "T2", "infoppo train --resume", {"lr": [1, 2]}, HUB_BASE)
    assert (resumed["start_time"], resumed["last_start_time"]) == ("T1", "T2")
    assert resumed["infoppo_command"] == "infoppo train"
    assert resumed["resumes"] == [
        {"time": "T2", "overrides": {"lr": [1, 2]}, "command": "infoppo train --resume"}
    ]
    assert resumed["base_model"] == {**HUB_BASE, "revision": "abc"}  # the revision the run started from
    other = launch_fields(previous, "T3", None, {}, {"path": "/m"})
    assert other["base_model"] == {"path": "/m"} and other["resumes"][-1] == {"time": "T3", "overrides": {}}


def test_a_manifest_is_restored_byte_for_byte(tmp_path):
    run = RunDir(tmp_path)
    write_manifest(run, RECORD)
    saved = run.manifest.read_bytes()
    write_manifest(run, {**RECORD, "status": "failed"})
    restore_manifest(run, saved)
    assert run.manifest.read_bytes() == saved


def test_the_commit_says_when_the_code_is_not_that_commits(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "code.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (tmp_path / "notes.txt").write_text("untracked files are not the code\n")
    assert git_commit(tmp_path) == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == head + UNCOMMITTED
    assert git_commit(tmp_path / "no-such-checkout") is None
