"""`infoppo train` and `infoppo presets`: dry runs carry the paper's values; bad input fails cleanly."""

from __future__ import annotations

import json
import math
import sys

import pytest
from cli_process import run_infoppo
from typer.testing import CliRunner

from infoppo_cli.cli import app
from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.train.plan import TrainPlan, TrainRequest, plan_training
from infoppo_cli.train.presets import preset_names
from infoppo_cli.train.run import check_launch, manifest, run_training

runner = CliRunner()
PRESETS = ["qwen3-4b", "qwen3-8b", "qwen3-14b", "llama-3.2-3b-instruct"]
METHODS = ["infoppo", "ppo", "dapo", "dapo-ft", "info-gae", "info-clip"]


def dry_run(*args: str) -> str:
    """A dry run's output; without a choice of benchmarks, with the in-training eval off (the AIME
    sets are not cached on a test machine, and a dry run checks that they load)."""
    chosen = ["--eval-bench", "none"] if "--eval-bench" not in args else []
    result = runner.invoke(app, ["train", "--dry-run", *args, *chosen])
    assert result.exit_code == 0, result.output
    return result.output


def test_every_preset_is_offered():
    assert preset_names() == sorted([*PRESETS, "tiny-cpu", "tiny-cpu-long", "tiny-cpu-shortcut"])
    result = runner.invoke(app, ["presets"])
    assert result.exit_code == 0
    for name in PRESETS + METHODS:
        assert name in result.output
    from infoppo_cli.cli.train import presets_table

    table = presets_table().renderables[0]
    rows = zip(*(column._cells for column in table.columns), strict=True)
    headers = [column.header for column in table.columns]
    tiny = dict(zip(headers, next(r for r in rows if r[0] == "tiny-cpu"), strict=True))
    assert tiny["layout"] == "1 CPU worker(s) per model" and tiny["rollout"] == "1 CPU engine(s)"


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("method", METHODS)
def test_dry_run_contains_the_paper_values(preset, method):
    out = dry_run("--preset", preset, "--method", method)
    response = "12288" if preset == "qwen3-14b" else "10240"
    assert f"--rollout.max_new_tokens {response}" in out
    assert "--actor.adam.lr 1e-06" in out and "--reward.remote_url" in out
    assert "--rollout.temperature 1.0" in out
    if method in ("infoppo", "ppo"):
        assert "--critic.adam.lr 2e-06" in out and "--critic.lr_warmup_ratio 0.0" in out
    if method == "infoppo":
        paper = ["--algo.advantage.gamma 0.999", "--algo.advantage.lambd 0.99", 'norm = "batch"']
        paper += ["eps_low_info = 10.0", "eps_high_info = 20.0"]
        for flag in paper:
            assert flag in out
    if method == "ppo":
        assert "--algo.advantage.gamma 1.0" in out and "--algo.advantage.lambd 1.0" in out
        assert "--actor.eps_clip_low_high 0.2 0.28" in out
    if method in ("dapo", "dapo-ft"):
        assert "--algo.advantage.estimator group_norm" in out and "--algo.dynamic_filtering_enable" in out
        assert "--actor.eps_clip_low_high 0.2 0.28" in out and "--reward.overlong_buffer_len" in out
        assert "critic.model_name_or_path" not in out
    if method == "dapo-ft":
        assert "top_entropy_frac = 0.2" in out and "--actor.entropy_coef 0.0" in out
    if method in ("dapo", "dapo-ft"):  # DAPO's official shape, micro-batches packed by tokens
        max_len = (12288 if preset == "qwen3-14b" else 10240) + 1024
        for flag in [
            "--rollout.batch_size 512",
            "--rollout.n_samples_per_prompt 16",
            "--train.batch_size 512",
        ]:
            assert flag in out
        buffer = 2458 if preset == "qwen3-14b" else 2048  # 20% of the maximum response (verl recipe/dapo)
        assert "--actor.dual_clip 10.0" in out and f"--reward.overlong_buffer_len {buffer}" in out
        assert "--train.dynamic_batch_enable" in out and f"--train.max_tokens_per_gpu {max_len}" in out
    assert "--actor.lr_scheduler constant_with_warmup" in out


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("method", METHODS)
def test_dry_run_plan_shows_schedule_shape_and_scope(preset, method, tmp_path):
    from infoppo_cli.train.summary import summary_rows

    data = tmp_path / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(17000)))
    rows = dict(summary_rows(plan_training(TrainRequest(preset=preset, method=method, data=str(data)))))
    assert rows["actor lr / schedule"] == "1e-06 / constant_with_warmup"
    assert rows["actor warm-up"].startswith("10 RL steps = ")
    assert "responses per RL step" in rows["step shape"] and "per GPU" in rows["micro-batch (training pool)"]
    assert rows["RL steps"] == f"1050 (preset {preset})"  # every method of a preset: one axis
    assert rows["eval at steps"] == "0, 5, 10, 15, 20, 25, ..., 1050 (211 points)"
    assert (
        rows["checkpoints"].startswith("at steps 5, 10, ")
        and "the best by the mean Mean@k" in rows["checkpoints"]
    )
    if method in ("dapo", "dapo-ft"):
        assert rows["step shape"].startswith("512 prompts x 16 responses")
        assert rows["actor warm-up"].startswith("10 RL steps = 160 optimizer steps")
        assert rows["reward values"] == "+1 correct, -1 otherwise (signed), plus the overlong penalty"
        assert rows["AdamW betas"] == "(0.9, 0.999) (verl)"
        assert rows["dynamic sampling"] == "keep groups whose mean score is strictly inside (0, 1)"
        assert rows["passes over the data"].startswith("up to 350 (train.num_episodes)")
        assert "cannot express DAPO's generation batch of 3x" in rows["not expressible"]
        # the official pool: 8 GPUs' token budgets gathered by ring attention
        max_len = (12288 if preset == "qwen3-14b" else 10240) + 1024
        assert rows["micro-batch (training pool)"].startswith(f"up to {8 * max_len:,} tokens")
    else:
        assert rows["critic lr / schedule"] == "2e-06 / constant, no warm-up"
        assert rows["reward values"] == "+1 correct, +0 otherwise (binary)"
        assert rows["AdamW betas"] == "(0.9, 0.95) (openrlhf)"
        assert rows["passes over the data"].startswith("4 (train.num_episodes)")
    if method == "dapo-ft":
        assert rows["policy-loss tokens"].startswith("top 20% of current-policy entropy per micro-batch")


def test_dry_run_prints_one_flag_per_line_and_scales_layout():
    out = dry_run("--preset", "qwen3-14b", "--nodes", "2", "--gpus-per-node", "4", "--seed", "7")
    lines = [line.strip() for line in out.splitlines()]
    assert "--vllm.num_engines 4 \\" in lines and "--vllm.tensor_parallel_size 2 \\" in lines
    assert "--actor.num_nodes 2 \\" in lines and "--actor.num_gpus_per_node 4 \\" in lines
    assert "--train.seed 7 \\" in lines


def test_options_and_set_override_the_preset(tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(1280)))
    options = ["--preset", "qwen3-4b", "--gamma", "0.99", "--lambd", "0.95", "--norm", "sentence"]
    options += ["--eps-low-info", "5", "--eps-high-info", "10", "--data", str(data)]
    options += ["--set", "rollout.n_samples_per_prompt=4", "--set", "actor.eps_clip_low_high=0.1,0.2"]
    out = dry_run(*options)
    expected = ["--algo.advantage.gamma 0.99", "--algo.advantage.lambd 0.95", 'norm = "sentence"']
    expected += [
        "eps_low_info = 5.0",
        "--rollout.n_samples_per_prompt 4",
        "--actor.eps_clip_low_high 0.1 0.2",
    ]
    for flag in expected:
        assert flag in out
    # one RL step (64 prompts x 4) is 2 optimizer steps of 128 responses; 1050 RL steps are 2100, and
    # 10 warm-up RL steps are 20 optimizer steps: ratio 20 / 2100
    ratio = float(out.split("--actor.lr_warmup_ratio ")[1].split()[0])
    assert math.ceil(2100 * ratio) == 20 and "--train.num_episodes 53" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "qwen3-99b"], "unknown preset 'qwen3-99b'; choose one of: llama-3.2-3b-instruct"),
        (["--preset", "qwen3-4b", "--method", "grpo"], "unknown method 'grpo'; choose one of: infoppo, ppo"),
        (["--preset", "qwen3-4b", "--gamma", "1.5"], "--gamma must be in (0.0, 1.0]"),
        (["--preset", "qwen3-4b", "--lambd", "-1"], "--lambda must be in [0.0, 1.0]"),
        (["--preset", "qwen3-4b", "--eps-low-info", "-2"], "--eps-low-info must be a finite number >= 0"),
        (
            ["--preset", "qwen3-4b", "--data", "/nonexistent/prompts.jsonl"],
            "data file /nonexistent/prompts.jsonl",
        ),
        (["--preset", "qwen3-4b", "--set", "rollout.batchsize=3"], "did you mean --rollout.batch_size?"),
        (["--preset", "qwen3-4b", "--set", "novalue"], "--set expects KEY=VALUE"),
        (["--preset", "qwen3-4b", "--set", "train.async_enable=true"], "async mode"),
        (
            ["--preset", "qwen3-4b", "--method", "dapo", "--gamma", "0.9"],
            "--gamma only applies to a method with a critic (GAE), not dapo (group_norm,",
        ),
        (
            ["--preset", "qwen3-4b", "--method", "ppo", "--norm", "batch"],
            "--norm only applies to a method that uses rho",
        ),
        (
            ["--preset", "qwen3-4b", "--method", "info-gae", "--eps-low-info", "3"],
            "--eps-low-info only applies to a method whose components read it, not info-gae (info_time_gae,",
        ),
        (["--preset", "qwen3-4b", "--methods-file", "nope.toml"], "methods file nope.toml: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = runner.invoke(app, ["train", "--dry-run", *args])
    assert isinstance(result.exception, UsageError), result.output
    assert message in str(result.exception) and "\n" not in str(result.exception)


@pytest.mark.slow
def test_console_script_prints_one_line_and_exits_2():
    done = run_infoppo("train", "--preset", "nope", "--dry-run")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: unknown preset 'nope'")
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.slow
def test_no_gpu_exits_1_and_points_at_dry_run(tmp_path):
    data = _prompts(tmp_path, 64)
    done = run_infoppo(
        "train",
        "--preset",
        "qwen3-4b",
        "--data",
        data,
        "--output-dir",
        str(tmp_path / "run"),
        "--eval-bench",
        "none",
    )
    assert done.returncode == 1
    assert "no CUDA GPU" in done.stderr and "--dry-run" in done.stderr
    assert not (tmp_path / "run" / "manifest.json").exists()


def fake_plan(tmp_path, monkeypatch, script: str, **request) -> TrainPlan:
    request.setdefault("eval_bench", "none")  # no benchmark download here (offline)
    data = _prompts(tmp_path, 64)  # one RL step's prompts
    plan = plan_training(
        TrainRequest(preset="qwen3-4b", data=data, output_dir=str(tmp_path / "run"), **request)
    )
    monkeypatch.setattr("infoppo_cli.train.run.require_gpu", lambda plan: None)
    monkeypatch.setattr(TrainPlan, "command", lambda self: [sys.executable, "-c", script])
    return plan


def test_run_writes_manifest_and_refuses_to_overwrite(tmp_path, monkeypatch):
    plan = fake_plan(tmp_path, monkeypatch, "print('training')")
    assert run_training(plan) == 0
    saved = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert saved["status"] == "finished" and saved["exit_code"] == 0 and saved["seed"] == 42
    assert saved["config"]["openrlhf_flags"]["algo.advantage.gamma"] == 0.999
    assert saved["versions"]["openrlhf"] == "0.11.2" and "torch" in saved["versions"]
    assert saved["command"][-2:] == ["-c", "print('training')"]
    with pytest.raises(UsageError, match="already holds a run"):
        run_training(plan)
    resumed = fake_plan(tmp_path, monkeypatch, "raise SystemExit(3)", resume=True, steps=2000)
    assert "--ckpt.load_enable" in resumed.openrlhf_argv()
    before = (tmp_path / "run" / "manifest.json").read_bytes()
    assert run_training(resumed) == 3
    assert (tmp_path / "run" / "manifest.json").read_bytes() == before  # failed before any step: as it was
    trains = (
        "open(r'"
        + str(tmp_path / "run" / "metrics.jsonl")
        + "', 'a').write('{\"step\": 1}\\n'); raise SystemExit(3)"
    )
    resumed = fake_plan(tmp_path, monkeypatch, trains, resume=True, steps=2000)
    assert run_training(resumed) == 3
    again = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert again["status"] == "failed" and again["start_time"] == saved["start_time"]
    assert [entry["overrides"] for entry in again["resumes"]] == [{}]


def test_the_launch_s_output_goes_to_train_log_and_only_the_step_lines_to_the_terminal(
    tmp_path, monkeypatch, capsys
):
    from infoppo_cli.openrlhf_adapter.progress import MARKER

    step = json.dumps({"event": "step", "step": 1, "steps": 1, "seconds": 2.0, "reward": 0.25})
    script = (
        "import sys; print('namespace(zero_stage=2, param_dtype=bf16)'); "
        "print('(CpuPolicyModelActor pid=4) Actor( ... )', file=sys.stderr); "
        f"print('(InfoPPOTrainer pid=5) {MARKER}' + {step!r})"
    )
    assert run_training(fake_plan(tmp_path, monkeypatch, script)) == 0
    log = (tmp_path / "run" / "train.log").read_text()
    assert "namespace(zero_stage=2" in log and "(CpuPolicyModelActor pid=4) Actor( ... )" in log
    assert "step 1/1  reward 0.250  took 2.0s" in log and "(exit code 0)" in log
    shown = capsys.readouterr().out
    assert shown == "step 1/1  reward 0.250  took 2.0s\n"  # OpenRLHF's dump stays in the log


def test_resume_needs_a_previous_run(tmp_path, monkeypatch):
    plan = fake_plan(tmp_path, monkeypatch, "pass", resume=True)
    with pytest.raises(UsageError, match="nothing to resume"):
        run_training(plan)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{torn", "is not a readable manifest"),
        ('{"config": {"infotime": []}}', "manifest: config.infotime is missing, empty or not an object"),
        ('{"config": {"infotime": {"rl_steps": 1}}, "status": 3}', "status = 3 is not a string"),
    ],
)
def test_resume_of_a_malformed_manifest_names_the_file_and_the_field(tmp_path, monkeypatch, text, problem):
    plan = fake_plan(tmp_path, monkeypatch, "pass", resume=True)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(text)
    with pytest.raises(UsageError) as info:
        run_training(plan)
    assert str(info.value).startswith(f"cannot resume: {tmp_path / 'run' / 'manifest.json'} ")
    assert problem in str(info.value) and "\n" not in str(info.value)
    assert (tmp_path / "run" / "manifest.json").read_text() == text  # nothing written


def test_manifest_records_versions_and_commit(tmp_path):
    plan = plan_training(TrainRequest(preset="qwen3-8b", method="ppo"), strict_data=False)
    record = manifest(plan, "running")
    assert record["config"]["model"] == "Qwen/Qwen3-8B-Base" and record["config"]["method"] == "ppo"
    assert set(record["versions"]) >= {"infoppo", "openrlhf", "torch", "vllm", "deepspeed", "ray"}


def test_gpu_check_is_skipped_for_a_ray_cluster():
    from infoppo_cli.train.run import require_gpu

    plan = plan_training(TrainRequest(preset="qwen3-4b", address="ray://head:10001"), strict_data=False)
    require_gpu(plan)  # no error: the cluster's GPUs are checked when the job starts
    local = plan_training(TrainRequest(preset="qwen3-4b"), strict_data=False)
    with pytest.raises(EnvironmentProblem):
        require_gpu(local)


def test_another_openrlhf_version_is_refused(monkeypatch):
    monkeypatch.setattr("infoppo_cli.resources.installed_version", lambda name: "0.11.0")
    result = runner.invoke(app, ["train", "--preset", "qwen3-4b", "--dry-run"])
    assert isinstance(result.exception, EnvironmentProblem)
    assert "infoppo needs openrlhf==0.11.2, found version 0.11.0" in str(result.exception)
    assert result.exception.exit_code == 1


def test_dry_run_notes_data_that_is_not_prepared_yet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = dry_run("--preset", "qwen3-4b")
    assert "does not exist yet" in out and "infoppo data prep dapo-math-17k" in out


def test_model_option_replaces_actor_and_critic():
    out = dry_run("--preset", "qwen3-4b", "--model", "Qwen/Qwen3-0.6B-Base")
    assert "--actor.model_name_or_path Qwen/Qwen3-0.6B-Base" in out
    assert "--critic.model_name_or_path Qwen/Qwen3-0.6B-Base" in out


def _prompts(tmp_path, count: int) -> str:
    data = tmp_path / f"prompts-{count}.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(count)))
    return str(data)


def test_steps_choose_the_length_and_reach_the_trainer(tmp_path):
    out = dry_run(
        "--preset", "qwen3-4b", "--data", _prompts(tmp_path, 1000), "--steps", "20", "--lambda", "0.9"
    )
    assert "rl_steps = 20" in out and "total_optimizer_steps = 80" in out
    assert "--train.num_episodes 2" in out and "--algo.advantage.lambd 0.9" in out  # 20 x 64 > 1000
    assert "eval_before = true" in out
    assert "eval_before = false" in dry_run("--preset", "qwen3-4b", "--no-eval-before")


def test_data_smaller_than_one_rl_step_is_planned_over_several_passes(tmp_path):
    out = dry_run("--preset", "qwen3-4b", "--data", _prompts(tmp_path, 10), "--steps", "3")
    # a batch of 64 prompts over 10 takes 7 passes (the last one's 6 left over are dropped): 3 x 7
    assert "--train.num_episodes 21" in out


def test_an_eval_outside_the_run_and_a_run_inside_the_warm_up_are_warned_about(tmp_path):
    bench = tmp_path / "aime.jsonl"
    bench.write_text(json.dumps({"problem": "1+1?", "answer": "2"}) + "\n")
    args = ["--data", _prompts(tmp_path, 1000), "--steps", "3", "--eval-every", "10", "--no-eval-before"]
    out = dry_run("--preset", "qwen3-4b", *args, "--eval-bench", f"aime24={bench}")
    assert "warning: the 10-step warm-up covers the whole 3-step run" in " ".join(out.split())
    assert "no in-training eval falls inside the run" in " ".join(out.split())


def test_a_dry_run_refuses_what_a_launch_would(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = _prompts(tmp_path, 1000)
    refused = {
        "nothing to resume": ["--resume", "--output-dir", str(tmp_path / "none"), "--eval-bench", "none"],
        "cannot load aime24": [],  # the default in-training benchmarks, not cached on this machine
    }
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "manifest.json").write_text("{}")
    refused["already holds a run"] = ["--output-dir", str(tmp_path / "taken"), "--eval-bench", "none"]
    for message, extra in refused.items():  # after the whole plan, as an error line, exit 2
        result = runner.invoke(app, ["train", "--preset", "qwen3-4b", "--data", data, "--dry-run", *extra])
        assert result.exit_code == 2, (message, result.output)
        plan, _, errors = result.output.partition("error: ")
        assert "OpenRLHF invocation:" in plan and message in " ".join(errors.split())


def test_a_finished_run_is_not_resumed_to_the_same_length(tmp_path, monkeypatch):
    plan = fake_plan(tmp_path, monkeypatch, "print('training')", steps=4)
    assert run_training(plan) == 0
    with pytest.raises(UsageError, match="already finished its 4 RL steps"):
        run_training(fake_plan(tmp_path, monkeypatch, "pass", steps=4, resume=True))
    longer = fake_plan(tmp_path, monkeypatch, "pass", steps=8, resume=True)
    assert run_training(longer) == 0 and longer.infotime["rl_steps"] == 8


def test_a_gpu_preset_is_refused_on_the_cpu_with_its_cost(tmp_path):
    result = runner.invoke(
        app,
        ["train", "--preset", "qwen3-4b", "--data", _prompts(tmp_path, 64), "--device", "cpu", "--dry-run"],
    )
    assert isinstance(result.exception, UsageError)
    message = str(result.exception)
    assert message.startswith("--device cpu cannot run with ds.packing_samples")  # the first CPU misfit
    cpu_flags = ["ds.packing_samples", "train.colocate_all", "vllm.enable_sleep", "ds.enable_sleep"]
    args = [arg for flag in cpu_flags for arg in ("--set", f"{flag}=false")]
    args += ["--set", "ds.attn_implementation=sdpa"]
    result = runner.invoke(
        app,
        [
            "train",
            "--preset",
            "qwen3-4b",
            "--data",
            _prompts(tmp_path, 64),
            "--device",
            "cpu",
            "--dry-run",
            *args,
        ],
    )
    assert isinstance(result.exception, UsageError)
    assert "(4B parameters) needs about" in str(result.exception) and "hours per RL step" in str(
        result.exception
    )


def test_the_tiny_cpu_preset_plans_a_cpu_run_of_its_task(task_cache):
    from infoppo_cli.train.summary import summary_rows

    plan = plan_training(TrainRequest(preset="tiny-cpu"))
    rows = dict(summary_rows(plan))
    assert plan.infotime["device"] == "cpu" and plan.flags["actor.model_name_or_path"] == str(
        task_cache.model_dir
    )
    assert plan.data == str(task_cache.train_file) and plan.evaluation.benches == {
        "arithmetic": str(task_cache.heldout_file)
    }
    assert rows["RL steps"] == "40 (preset tiny-cpu)" and rows["eval at steps"] == "0, 10, 20, 30, 40"
    assert rows["rollout / training (--device cpu)"].startswith("DeepSpeed on its CPU accelerator")
    assert rows["DeepSpeed ZeRO stage / dtype"] == "2 / bf16"
    assert rows["micro-batch (training pool)"].endswith("per CPU worker")  # no GPU wording on a CPU run
    notes = [value for name, value in summary_rows(plan) if name == "note"]
    assert notes[0].startswith("task 'arithmetic' (cached;")


def test_more_cpu_workers_than_cores_or_nodes_are_refused_before_launch(task_cache, monkeypatch):
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    smaller = ["train.micro_batch_size=8", "rollout.micro_batch_size=32"]  # batches for 4 workers
    four = TrainRequest(preset="tiny-cpu", gpus_per_node=4, overrides=smaller)
    with pytest.raises(UsageError, match="4 training workers per model need 4 cores and this machine has 2"):
        plan_training(four)
    with pytest.raises(UsageError, match="--nodes must be 1"):
        plan_training(TrainRequest(preset="tiny-cpu", nodes=2, overrides=smaller))
    two = plan_training(TrainRequest(preset="tiny-cpu", gpus_per_node=2, overrides=smaller))
    assert two.flags["actor.num_gpus_per_node"] == 2


def test_dapos_ring_attention_uses_every_gpu_of_a_smaller_run(tmp_path):
    from infoppo_cli.train.summary import summary_rows

    request = TrainRequest(preset="qwen3-4b", method="dapo-ft", data=_prompts(tmp_path, 600), gpus_per_node=4)
    plan = plan_training(request)
    rows = dict(summary_rows(plan))
    # the recipe's pool of 8 x 11,264 tokens, over 4 GPUs of twice the tokens each
    assert plan.flags["ds.ring_attn_size"] == 4 and plan.flags["train.max_tokens_per_gpu"] == 2 * (
        10240 + 1024
    )
    notes = [value for name, value in summary_rows(plan) if name == "note"]
    assert "ring attention over 4 GPU(s) instead of the recipe's 8: this run has 4" in notes
    assert any("so that a micro-batch still pools 90,112 tokens" in note for note in notes)
    assert rows["micro-batch (training pool)"].startswith(f"up to {8 * 11264:,} tokens")


def test_a_benches_file_benchmark_is_checked_before_launch_and_loaded_once(tmp_path, monkeypatch):
    from infoppo_cli.eval import benchmarks

    toml = tmp_path / "benches.toml"
    toml.write_text(
        '[olympiad]\ntitle = "Olympiad"\nhf_id = "me/olympiad"\nsplit = "test"\n'
        'problem_column = "q"\nanswer_column = "a"\nsize = 1\nlicense = "CC0"\n'
    )
    loads = []
    monkeypatch.setattr(
        benchmarks, "_rows_from_hub", lambda spec: loads.append(spec) or [{"q": "3?", "a": "3"}]
    )
    plan = fake_plan(tmp_path, monkeypatch, "pass", eval_bench="olympiad", benches_file=str(toml))
    checked = check_launch(plan)  # what `infoppo train` refuses on, before it prints the plan
    assert [problem.answer for problem in checked.eval_problems["olympiad"]] == ["3"]
    assert run_training(plan, checked) == 0
    assert len(loads) == 1  # the launch writes the prompts it checked, without loading them again
    rows = [json.loads(line) for line in (tmp_path / "run" / "eval-prompts.jsonl").read_text().splitlines()]
    assert [(row["datasource"], row["label"]) for row in rows] == [("olympiad", "3")]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("vllm.sync_backend=nccl", "runs its vLLM engines with vllm.sync_backend=gloo"),
        ("vllm.enforce_eager=false", "runs its vLLM engines with vllm.enforce_eager=True"),
        ("vllm.sync_with_ray=true", "cannot run with vllm.sync_with_ray"),
    ],
)
def test_a_cpu_run_keeps_its_engines_weight_sync_over_gloo(task_cache, setting, message):
    result = runner.invoke(app, ["train", "--preset", "tiny-cpu", "--dry-run", "--set", setting])
    assert isinstance(result.exception, UsageError)
    assert message in str(result.exception)
    plan = runner.invoke(app, ["train", "--preset", "tiny-cpu", "--dry-run"])
    assert plan.exit_code == 0 and "--vllm.sync_backend gloo" in plan.output
