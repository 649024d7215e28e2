"""`infoppo train --dry-run` refuses what a real launch would trip over."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from infoppo_cli.cli import app
from infoppo_cli.components import SETTINGS
from infoppo_cli.errors import UsageError
from infoppo_cli.train import validate
from infoppo_cli.train.validate import DECLARED_FLAGS

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
    rows = {"prompt": [f"q{i}" for i in range(200)], "label": ["1"] * 200}  # enough for an RL step
    pq.write_table(pa.table(rows), root / "good.parquet")
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
    args = ["train", "--dry-run", "--preset", "qwen3-4b", "--data", str(files["good.parquet"])]
    result = runner.invoke(app, [*args, "--eval-bench", "none"])  # offline: no benchmark download
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
        (["--set", "train.seed=x"], "--set train.seed=x: train.seed takes an integer"),
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
        (["--set", "rollout.max_new_tokens=20000"], "raise data.max_len with it (--set data.max_len=N"),
    ],
)
def test_unworkable_values_are_refused_at_dry_run(files, args, message):
    refuse(["--data", str(files["good.jsonl"]), *args], message)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        # a value OpenRLHF's parser would not convert: refused before anything computes with it
        ("rollout.batch_size=32.5", "--set rollout.batch_size=32.5: rollout.batch_size takes an integer"),
        ("train.max_epochs=abc", "train.max_epochs takes an integer"),
        ("rollout.temperature=warm", "rollout.temperature takes a number"),
        ("actor.eps_clip_low_high=0.2", "actor.eps_clip_low_high takes 2 values, got 1"),
        ("algo.advantage.estimator=ppo2", "algo.advantage.estimator must be one of gae,"),
        # non-finite numbers
        ("actor.adam.lr=inf", "actor.adam.lr must be a finite number"),
        ("critic.adam.lr=nan", "critic.adam.lr must be a finite number"),
        ("rollout.top_p=-inf", "rollout.top_p must be a finite number"),
        # values no run can mean
        ("rollout.temperature=-1", "--rollout.temperature must be > 0, got -1"),
        ("rollout.temperature=0", "--rollout.temperature must be > 0, got 0"),
        ("eval.temperature=-0.5", "--eval.temperature must be >= 0, got -0.5"),
        ("rollout.top_p=0", "--rollout.top_p must be in (0, 1], got 0"),
        ("rollout.top_p=1.5", "--rollout.top_p must be in (0, 1], got 1.5"),
        ("algo.advantage.gamma=1.5", "--algo.advantage.gamma (--gamma) must be in (0.0, 1.0], got 1.5"),
        ("algo.advantage.lambd=-0.1", "--algo.advantage.lambd (--lambda) must be in [0.0, 1.0], got -0.1"),
        ("actor.lr_warmup_ratio=2", "--actor.lr_warmup_ratio must be in [0, 1], got 2"),
        ("actor.adam.betas=0.9,1.5", "--actor.adam.betas must be in [0, 1), got 0.9 1.5"),
        ("actor.eps_clip_low_high=-0.1,0.2", "--actor.eps_clip_low_high must be >= 0"),
        ("actor.dual_clip=0.5", "--actor.dual_clip must be > 1, got 0.5"),
        ("actor.adam.weight_decay=-0.1", "--actor.adam.weight_decay must be >= 0"),
        ("vllm.gpu_memory_utilization=1.2", "--vllm.gpu_memory_utilization must be in (0, 1]"),
        ("ds.zero_stage=4", "--ds.zero_stage must be 0, 1, 2 or 3, got 4"),
        ("train.max_epochs=0", "--train.max_epochs must be >= 1, got 0"),
        ("data.max_samples=-1", "--data.max_samples must be >= 1, got -1"),
        ("reward.clip_range=5,-5", "--reward.clip_range takes LOW HIGH with LOW < HIGH, got 5 -5"),
    ],
)
def test_impossible_set_values_are_refused(files, setting, message):
    refuse(["--data", str(files["good.jsonl"]), "--set", setting], message)


@pytest.mark.parametrize("flag", sorted(DECLARED_FLAGS))
def test_a_flag_that_carries_a_setting_is_checked_by_the_setting_s_declaration(flag):
    """One range per setting: ``--set algo.advantage.gamma`` is refused by gamma's declaration, with
    its name and range, and no table of OpenRLHF ranges checks it a second time."""
    setting = DECLARED_FLAGS[flag]
    assert flag not in validate._ranges()
    assert {setting.name for setting in SETTINGS.values() if setting.openrlhf} == {"gamma", "lambd"}
    bad = setting.range.high + 0.5
    with pytest.raises(UsageError) as refused:
        validate.check_flags({flag: bad})
    assert str(refused.value) == f"--{flag} ({setting.options[0]}) {setting.range.problem(bad)}"
    validate.check_flags({flag: setting.range.high})


def test_one_flag_set_twice_with_two_values_is_refused(files):
    twice = ["--set", "rollout.batch_size=32", "--set", "rollout.batch_size=64"]
    refuse(
        ["--data", str(files["good.jsonl"]), *twice], "--set rollout.batch_size is given twice (32 and 64)"
    )
    secret = ["--set", "logger.wandb.key=abc", "--set", "logger.wandb.key=def"]
    result = runner.invoke(app, ["train", "--dry-run", "--preset", "qwen3-4b", *secret])
    assert "given twice (<redacted> and <redacted>)" in str(result.exception)


def test_the_same_value_twice_and_an_infinite_checkpoint_budget_pass():
    from infoppo_cli.openrlhf_adapter.flags import parse_set_options

    given = ["rollout.batch_size=32", "rollout.batch_size=32", "ckpt.max_mem=inf"]
    assert parse_set_options(given) == {"rollout.batch_size": "32", "ckpt.max_mem": "inf"}


def test_check_flags_reads_a_flag_the_plan_leaves_out_at_openrlhf_s_default():
    from infoppo_cli.train.validate import check_flags

    flags = {"train.batch_size": 1024, "actor.num_nodes": 1, "actor.num_gpus_per_node": 8}
    check_flags(flags)  # rollout.batch_size 1024 x n_samples 1: OpenRLHF's defaults
    with pytest.raises(UsageError, match="rollout.batch_sise is not a flag of OpenRLHF"):
        check_flags({**flags, "rollout.batch_sise": 64})
    with pytest.raises(UsageError, match="did you mean --rollout.batch_size"):
        check_flags({**flags, "rollout.batch_sise": 64})
    with pytest.raises(UsageError, match="--rollout.batch_size 32.5: rollout.batch_size takes an integer"):
        check_flags({**flags, "rollout.batch_size": 32.5})


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


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_number_flag_takes_exactly_the_finite_floats(number):
    from infoppo_cli.openrlhf_adapter.flags import value_problem

    problem = value_problem("actor.adam.lr", repr(number))
    assert (problem is None) == math.isfinite(number)
    assert value_problem("rollout.batch_size", repr(number)) is not None  # '1.0' is no integer
    if math.isfinite(number) and number == int(number) and abs(number) < 2**53:
        assert value_problem("rollout.batch_size", str(int(number))) is None


def test_more_data_parallel_workers_than_an_optimizer_step_s_batch_holds_says_which_micro_batch_fits():
    """tiny-cpu trains an optimizer step of 32 responses in one micro-batch of 32: with two workers per
    model each takes half of every step, so the micro-batch must divide 16, and the refusal says so."""
    result = runner.invoke(app, ["train", "--dry-run", "--preset", "tiny-cpu", "--gpus-per-node", "2"])
    assert isinstance(result.exception, UsageError), result.output
    assert str(result.exception) == (
        "train.batch_size 32 is not a multiple of train.micro_batch_size x data-parallel actor GPUs = 64: "
        "set a train.micro_batch_size that divides 16 (--set train.micro_batch_size=N)"
    )
    fitted = ["--set", "train.micro_batch_size=16"]
    result = runner.invoke(
        app, ["train", "--dry-run", "--preset", "tiny-cpu", "--gpus-per-node", "2", *fitted]
    )
    assert isinstance(result.exception, UsageError), result.output  # upstream's own assertion, before Ray
    assert str(result.exception) == (
        "128 responses per step make 1 experience micro-batch(es) of rollout.micro_batch_size, fewer "
        "than the 2 data-parallel actor workers that share them: set rollout.micro_batch_size to at most 64 "
        "(--set rollout.micro_batch_size=N)"
    )
    fitted += ["--set", "rollout.micro_batch_size=64"]
    done = runner.invoke(app, ["train", "--dry-run", "--preset", "tiny-cpu", "--gpus-per-node", "2", *fitted])
    assert done.exit_code == 0, done.output
