"""final/README.md: a Hugging Face model card that says what the run was and, once evaluated, how it did."""

from __future__ import annotations

import shlex
import sys

from huggingface_hub import ModelCard

from infoppo_cli.rundir import RunDir, write_manifest, write_model_card

MANIFEST = {
    "config": {
        "method": "ppo",
        "preset": "qwen3-4b",
        "model": "Qwen/Qwen3-4B-Base",
        "openrlhf_flags": {"data.prompt_dataset": "org/math-data"},
    },
    "command": ["python", "-m", "openrlhf.cli.train_ppo_ray"],
    "seed": 1,
    "status": "finished",
    "versions": {"infoppo": "0.1.0"},
    "git_commit": "abc123",
}
METRICS = {
    "benches": {
        "aime24": {"k": 16, "mean@k": 31.256, "mean@k_se": 1.04, "pass@k": 60.0, "length_mean": 4021.4}
    },
    "average": {"k": 16, "mean@k": 31.256, "mean@k_se": None, "pass@k": 60.0, "length_mean": 4021.4},
}


def test_model_card_before_evaluation_says_how_to_fill_it(tmp_path):
    run = RunDir(tmp_path / "qwen3-4b-ppo-seed1")
    assert write_model_card(run) is None  # no manifest: nothing to describe
    run.final.mkdir(parents=True)
    write_manifest(run, MANIFEST)
    text = write_model_card(run).read_text()
    card = ModelCard(text)
    assert text.startswith("---\nbase_model: Qwen/Qwen3-4B-Base\n")
    assert card.data.base_model == "Qwen/Qwen3-4B-Base" and card.data.datasets == ["org/math-data"]
    assert card.data.tags == ["infoppo", "openrlhf", "reinforcement-learning", "math", "ppo"]
    assert card.data.library_name == "transformers" and card.data.pipeline_tag == "text-generation"
    assert "model-index" not in text and "model_name" not in text and "Not evaluated yet" in text
    assert "# qwen3-4b-ppo-seed1" in text and "python -m openrlhf.cli.train_ppo_ray" in text
    assert "- Method: `ppo`; preset: `qwen3-4b`; seed: 1\n" in text
    assert "- Status: finished; infoppo 0.1.0, commit abc123\n" in text
    assert text.endswith("```bash\npython -m openrlhf.cli.train_ppo_ray\n```\n")


def test_an_evaluated_run_gets_its_results_in_the_table_and_the_model_index(tmp_path):
    run = RunDir(tmp_path / "qwen3-4b-ppo-seed1")
    run.final.mkdir(parents=True)
    write_manifest(run, MANIFEST)
    text = write_model_card(run, METRICS).read_text()
    [result] = ModelCard(text).data.eval_results
    assert (result.dataset_name, result.metric_type, result.metric_value) == ("aime24", "mean@16", 31.26)
    assert ModelCard(text).data.model_name == "qwen3-4b-ppo-seed1"
    assert (
        "| Benchmark | Mean@16 (%) | ± SE | Pass@16 (%) | Mean length (tokens) |\n|---|---:|---:|---:|---:|\n"
        in text
    )
    assert "| aime24 | 31.3 | 1.0 | 60.0 | 4021 |\n| Average | 31.3 | - | 60.0 | 4021 |\n\nScores are" in text


def test_a_local_data_file_is_no_hub_dataset(tmp_path):
    run = RunDir(tmp_path / "r")
    run.final.mkdir(parents=True)
    flags = {"data.prompt_dataset": "/data/dapo.jsonl", "actor.model_name_or_path": "/models/base"}
    write_manifest(run, {"config": {"openrlhf_flags": flags}})
    card = ModelCard(write_model_card(run).read_text())
    assert card.data.datasets is None and card.data.base_model is None  # a path is no Hub model
    assert "- Base model: a local model, `/models/base`" in card.text
    assert "- Training data: `/data/dapo.jsonl`" in card.text and "- Method: `?`" in card.text


def test_a_finished_training_run_gets_its_model_card(tmp_path, monkeypatch):
    from infoppo_cli.train.plan import TrainPlan, TrainRequest, plan_training
    from infoppo_cli.train.run import run_training

    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "label": "1"}\n' * 64)  # one RL step's prompts
    request = TrainRequest(
        preset="qwen3-4b", data=str(data), output_dir=str(tmp_path / "run"), eval_bench="none"
    )
    plan = plan_training(request)
    final = tmp_path / "run" / "final"
    monkeypatch.setattr("infoppo_cli.train.run.require_gpu", lambda plan: None)
    script = f"import os; os.makedirs({str(final)!r})"  # what OpenRLHF's save at the end leaves
    monkeypatch.setattr(TrainPlan, "command", lambda self: [sys.executable, "-c", script])
    assert run_training(plan) == 0
    card = (final / "README.md").read_text()
    assert card.startswith("---\nbase_model: ") and "Not evaluated yet" in card
    assert f"**{plan.method.name}**" in card and shlex.quote(script) in card


def test_scores_of_other_weights_never_reach_the_card(tmp_path):
    """After ``train --resume`` rewrote ``final/``, the card must not show the old weights' scores."""
    from infoppo_cli.rundir.weights import short, weights_fingerprint

    run = RunDir(tmp_path / "qwen3-4b-ppo-seed1")
    run.final.mkdir(parents=True)
    write_manifest(run, MANIFEST)
    (run.final / "model.safetensors").write_bytes(b"weights before the resume")
    evaluated = {**METRICS, "weights_fingerprint": weights_fingerprint(str(run.final))}
    text = write_model_card(run, evaluated).read_text()
    assert "| aime24 | 31.3 |" in text and f"`{short(evaluated['weights_fingerprint'])}`" in text
    (run.final / "model.safetensors").write_bytes(b"weights after the resume, another size")
    text = write_model_card(run, evaluated).read_text()
    assert "| aime24 |" not in text and "Not evaluated yet" in text


TYPED = {
    **MANIFEST,
    "infoppo_command": "infoppo train --preset qwen3-4b --steps 3 --set 'logger.wandb.key=<redacted>'",
    "resumes": [
        {
            "time": "2026-01-02T03:04:05Z",
            "overrides": {"gamma": [0.999, 0.99]},
            "command": "infoppo train --preset qwen3-4b --steps 6 --resume --resume-override gamma",
        }
    ],
    "base_model": {"hub_id": "Qwen/Qwen3-4B-Base", "revision": "0123456789abcdef0123456789abcdef01234567"},
}


def test_the_card_shows_the_command_as_typed_its_resumes_the_hub_revision_and_the_weights(tmp_path):
    from infoppo_cli.rundir.weights import short, weights_fingerprint

    run = RunDir(tmp_path / "qwen3-4b-ppo-seed1")
    run.final.mkdir(parents=True)
    (run.final / "model.safetensors").write_bytes(b"the trained weights")
    write_manifest(run, TYPED)
    text = write_model_card(
        run, {**METRICS, "weights_fingerprint": weights_fingerprint(str(run.final))}
    ).read_text()
    assert ModelCard(text).data.base_model == "Qwen/Qwen3-4B-Base"
    assert (
        "- Base model: `Qwen/Qwen3-4B-Base` (Hugging Face Hub, revision "
        "`0123456789abcdef0123456789abcdef01234567`)\n" in text
    )
    assert f"- Weights: `{short(weights_fingerprint(str(run.final)))}` (SHA-256" in text
    assert "| aime24 | 31.3 |" in text  # the eval table, of these weights
    assert f"## Training command\n\n```bash\n{TYPED['infoppo_command']}\n```\n" in text
    assert (
        "Resumed 1 time(s):\n\n- 2026-01-02T03:04:05Z: `infoppo train --preset qwen3-4b --steps 6 "
        "--resume --resume-override gamma` (changed: gamma 0.999 -> 0.99)\n" in text
    )
    assert text.index("## Training command") < text.index("## Exact launch")  # the internal line comes last
    assert text.endswith("```bash\npython -m openrlhf.cli.train_ppo_ray\n```\n")


def test_a_task_built_base_model_is_named_by_its_task_not_its_cache_path(tmp_path):
    run = RunDir(tmp_path / "tiny")
    run.final.mkdir(parents=True)
    cache_path = "/home/u/.cache/infoppo/tasks/arithmetic-0a1b2c/model"
    base = {"task": "arithmetic", "preset": "tiny-cpu", "recipe": "arithmetic-0a1b2c", "path": cache_path}
    config = {"method": "ppo", "preset": "tiny-cpu", "model": cache_path, "openrlhf_flags": {}}
    write_manifest(run, {**MANIFEST, "config": config, "base_model": base})
    text = write_model_card(run).read_text()
    assert ModelCard(text).data.base_model is None  # the Hub's field names Hub models only
    assert "- Base model: the model infoppo's `arithmetic` task builds (preset `tiny-cpu`" in text
    assert "The `arithmetic` task's model trained with **ppo**" in text
    assert cache_path not in text.split("## Exact launch")[0]


def test_a_run_recorded_before_the_typed_command_says_so(tmp_path):
    run = RunDir(tmp_path / "old")
    run.final.mkdir(parents=True)
    write_manifest(run, MANIFEST)
    text = write_model_card(run).read_text()
    assert "Not recorded (the run was started before infoppo kept the command as typed)" in text
    assert "Resumed" not in text and "- Weights: `-`" in text  # no weight files to fingerprint


def test_a_launch_records_the_typed_command_the_base_model_and_each_resume(tmp_path, monkeypatch):
    import json

    from infoppo_cli.train.plan import TrainPlan, TrainRequest, plan_training
    from infoppo_cli.train.run import run_training

    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "label": "1"}\n' * 64)
    monkeypatch.setattr("infoppo_cli.train.run.require_gpu", lambda plan: None)
    monkeypatch.setattr("infoppo_cli.rundir.base_model.hub_revision", lambda model: "c0ffee" * 6 + "c0ff")
    monkeypatch.setattr(TrainPlan, "command", lambda self: [sys.executable, "-c", "pass"])

    def launch(steps: int, typed: str, resume: bool = False) -> dict:
        request = TrainRequest(
            preset="qwen3-4b", data=str(data), output_dir=str(tmp_path / "run"), eval_bench="none",
            steps=steps, resume=resume,
        )  # fmt: skip
        plan = plan_training(request)
        plan.typed_command = typed
        assert run_training(plan) == 0
        return json.loads((tmp_path / "run" / "manifest.json").read_text())

    first = launch(2, "infoppo train --preset qwen3-4b --steps 2")
    assert first["infoppo_command"] == "infoppo train --preset qwen3-4b --steps 2" and "resumes" not in first
    assert first["base_model"] == {"hub_id": "Qwen/Qwen3-4B-Base", "revision": "c0ffee" * 6 + "c0ff"}
    resumed = launch(4, "infoppo train --preset qwen3-4b --steps 4 --resume", resume=True)
    assert resumed["infoppo_command"] == first["infoppo_command"]  # the run's first command stays
    [entry] = resumed["resumes"]
    assert (
        entry["command"] == "infoppo train --preset qwen3-4b --steps 4 --resume" and entry["overrides"] == {}
    )


def test_the_tiny_cpu_run_records_its_task_model(task_cache, tmp_path):
    from infoppo_cli.train.plan import TrainRequest, plan_training
    from infoppo_cli.train.provenance import base_model_record

    plan = plan_training(TrainRequest(preset="tiny-cpu", output_dir=str(tmp_path / "run")), strict_data=False)
    base = base_model_record(plan)
    assert (base["task"], base["preset"]) == ("arithmetic", "tiny-cpu")
    assert base["recipe"] == task_cache.directory.name and "hub_id" not in base
