"""`infoppo train --dry-run` refuses what a real launch would trip over (issue 13, section 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from infoppo_cli.cli import app
from infoppo_cli.errors import UsageError

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inputs")
    good = root / "good.jsonl"
    good.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(200)))
    (root / "empty.jsonl").write_text("\n\n")
    (root / "nolabel.jsonl").write_text(json.dumps({"prompt": "p", "answer": "1"}) + "\n")
    (root / "notjson.jsonl").write_text("prompt,label\n")
    (root / "prompts.csv").write_text("prompt,label\np,1\n")
    (root / "fake.parquet").write_text("not parquet")
    pq.write_table(pa.table({"question": ["q"], "label": ["1"]}), root / "noprompt.parquet")
    pq.write_table(pa.table({"prompt": ["q"], "label": ["1"]}), root / "good.parquet")
    (root / "dir").mkdir()
    return {path.name: path for path in root.iterdir()} | {"root": root}


def refuse(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["train", "--dry-run", "--preset", "qwen3-4b", *args])
    assert isinstance(result.exception, UsageError), result.output
    assert message in str(result.exception) and "\n" not in str(result.exception)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("dir", "is a directory; pass the JSONL/parquet file itself"),
        ("empty.jsonl", "is empty"),
        ("nolabel.jsonl", "lacks the column 'label' (it has: answer, prompt)"),
        ("notjson.jsonl", "the first row is not JSON"),
        ("prompts.csv", "must be a .jsonl or .parquet file"),
        ("fake.parquet", "is not a readable parquet file"),
        ("noprompt.parquet", "lacks the column 'prompt'"),
    ],
)
def test_bad_data_is_refused_at_dry_run(files, data, message):
    refuse(["--data", str(files[data])], message)


def test_good_parquet_and_other_column_names_pass(files):
    result = runner.invoke(
        app, ["train", "--dry-run", "--preset", "qwen3-4b", "--data", str(files["good.parquet"])]
    )
    assert result.exit_code == 0, result.output
    refuse(
        ["--data", str(files["good.jsonl"]), "--set", "data.label_key=answer"], "lacks the column 'answer'"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "./no/such/model"], "model path ./no/such/model does not exist"),
        (["--model", "/no/such/model"], "model path /no/such/model does not exist"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--seed", "1", "--set", "train.seed=2"], "--seed 1 and --set train.seed=2 disagree"),
        (["--set", "train.seed=x"], "is not an integer"),
        (["--set", "actor.adam.lr=0"], "--actor.adam.lr must be > 0"),
        (["--set", "critic.adam.lr=-1e-6"], "--critic.adam.lr must be > 0"),
        (["--set", "rollout.n_samples_per_prompt=0"], "--rollout.n_samples_per_prompt must be >= 1"),
        (
            ["--set", "train.batch_size=100"],
            "512 responses per step is not a multiple of train.batch_size 100",
        ),
        (
            ["--set", "train.batch_size=4", "--set", "rollout.batch_size=1"],
            "not a multiple of train.micro_batch_size",
        ),
        (
            ["--set", "rollout.max_new_tokens=20000"],
            "rollout.max_new_tokens 20000 leaves no room for the prompt",
        ),
        (["--set", "data.max_len=10240"], "leaves no room for the prompt in data.max_len 10240"),
    ],
)
def test_unworkable_values_are_refused_at_dry_run(files, args, message):
    refuse(["--data", str(files["good.jsonl"]), *args], message)


def test_the_seed_given_once_names_the_run_and_seeds_it(files, tmp_path, monkeypatch):
    from infoppo_cli.train.plan import TrainRequest, plan_training

    monkeypatch.chdir(tmp_path)
    data = str(files["good.jsonl"])
    plan = plan_training(TrainRequest(preset="qwen3-4b", data=data, overrides=["train.seed=7"]))
    assert plan.flags["train.seed"] == 7 and plan.output_dir.name == "qwen3-4b-infoppo-seed7"
    same = plan_training(TrainRequest(preset="qwen3-4b", data=data, seed=7, overrides=["train.seed=7"]))
    assert same.flags["train.seed"] == 7
    default = plan_training(TrainRequest(preset="qwen3-4b", data=data))
    assert default.flags["train.seed"] == 42 and default.output_dir.name.endswith("seed42")


def test_refusals_leave_the_inputs_untouched(files):
    before = {name: path.read_bytes() for name, path in files.items() if path.is_file()}
    refuse(["--data", str(files["nolabel.jsonl"]), "--output-dir", str(files["root"] / "run")], "lacks")
    assert {name: path.read_bytes() for name, path in files.items() if path.is_file()} == before
    assert not (files["root"] / "run").exists()
