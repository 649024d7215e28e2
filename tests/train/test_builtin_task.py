"""A preset's task: a real run builds it when the cache lacks it; a dry run never does, and says that the
first real run will, and about how long that takes."""

from __future__ import annotations

import pytest

from infoppo_cli.cli import main
from infoppo_cli.tasks.recipes import TASK_RECIPES
from infoppo_cli.train.builtin_task import _parameters
from infoppo_cli.train.plan import TrainRequest, plan_training


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """An empty task cache, and a build that fails the test if anything starts one."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("INFOPPO_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)

    def no_build(*args, **kwargs):
        raise AssertionError("a dry run started a task build")

    monkeypatch.setattr("infoppo_cli.tasks.cache.build_task", no_build)
    return cache


@pytest.mark.parametrize(
    ("preset", "minutes", "prompts"), [("tiny-cpu-long", 20, 4000), ("tiny-cpu", 2, 1700)]
)
def test_a_dry_run_plans_an_uncached_task_without_building_it(empty_cache, preset, minutes, prompts):
    plan = plan_training(TrainRequest(preset=preset), strict_data=False)
    task = plan.unbuilt_task
    assert task is not None and not task.files.directory.exists()
    assert plan.flags["actor.model_name_or_path"] == str(task.files.model_dir)
    assert plan.data == str(task.files.train_file) and plan.data_to_prepare is None
    assert plan.length.prompts == prompts  # the recipe's training split, not data prep's 17,398
    assert plan.cpu_cost is not None and 0.5e6 < plan.cpu_cost.params < 1e6
    (note,) = [note for note in plan.notes if "not built yet" in note]
    assert f"about {minutes} minutes" in note and "an estimate" in note and str(task.files.directory) in note
    assert list(empty_cache.iterdir()) == []  # nothing written, not even the lock


def test_the_dry_run_command_prints_the_plan_and_the_note_and_exits_0(empty_cache, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    with pytest.raises(SystemExit) as exited:
        main(["train", "--preset", "tiny-cpu-long", "--dry-run"])
    out = capsys.readouterr().out
    assert exited.value.code == 0, out
    assert "is not built yet" in out and "about 20 minutes on a 2-core CPU, an estimate" in out
    assert "OpenRLHF invocation:" in out and "does not exist yet" not in out
    assert list(empty_cache.iterdir()) == []


def test_a_real_plan_still_builds_the_task(empty_cache):
    with pytest.raises(AssertionError, match="started a task build"):
        plan_training(TrainRequest(preset="tiny-cpu"))


@pytest.mark.parametrize("name", sorted(TASK_RECIPES))
def test_the_size_a_dry_run_plans_with_is_the_built_model_s(name):
    """Counted from the recipe's shape; the built model has the same shape (its vocabulary may be a
    little smaller when the tokenizer learns fewer merges)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    spec = TASK_RECIPES[name].model
    config = Qwen3Config(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        head_dim=spec.head_dim,
        tie_word_embeddings=True,
    )
    model = Qwen3ForCausalLM(config)
    assert _parameters(TASK_RECIPES[name]) == sum(p.numel() for p in model.parameters())
