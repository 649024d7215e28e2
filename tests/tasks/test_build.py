"""Building a task: the files and their rows, the progress stages, and (slow: the real default build)
a warm start that is right part of the time at temperature 1.0, loadable by OpenRLHF's Actor in bf16."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
import torch
from tiny_task import tiny_recipe
from transformers import AutoModelForCausalLM, AutoTokenizer

from infoppo_cli.data.templates import chat_prompt, render_prompt
from infoppo_cli.eval.benchmarks import load_bench
from infoppo_cli.tasks import TaskRecipe
from infoppo_cli.tasks.arithmetic import split_problems
from infoppo_cli.tasks.build import HELDOUT_FILE, MODEL_DIR, TRAIN_FILE, build_task
from infoppo_cli.tasks.sampling import heldout_accuracy, sample
from infoppo_cli.tasks.tokenizer import TURN_END


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_build_writes_the_model_and_both_problem_files_and_reports_progress(tmp_path):
    recipe = dataclasses.replace(tiny_recipe(), measure_samples=1)
    events = []
    report = build_task(recipe, tmp_path, lambda *event: events.append(event))
    train, heldout = read_rows(tmp_path / TRAIN_FILE), read_rows(tmp_path / HELDOUT_FILE)
    assert (len(train), len(heldout)) == (40, 10)
    assert not {row["problem"] for row in train} & {row["problem"] for row in heldout}
    assert AutoTokenizer.from_pretrained(tmp_path / MODEL_DIR).eos_token == TURN_END
    stages = list(dict.fromkeys(stage for stage, _, _ in events))
    assert stages == ["tokenizer", "warm start", "measuring", "writing"]
    assert ("warm start", 3, 3) in events
    assert report.parameters > 0 and set(report.accuracy) >= {"temperature_1", "greedy"}
    assert report.expected_accuracy == pytest.approx(0.42)


@pytest.fixture(scope="module")
def default_task(task_cache):
    """The default task, built once per session (``conftest.task_cache``)."""
    return task_cache


@pytest.fixture(scope="module")
def loaded(default_task):
    model = AutoModelForCausalLM.from_pretrained(default_task.model_dir).eval()
    return model, AutoTokenizer.from_pretrained(default_task.model_dir)


@pytest.mark.slow
def test_the_default_files_have_the_split_sizes_and_load_as_a_benchmark(default_task):
    spec = TaskRecipe().problems
    train = read_rows(default_task.train_file)
    assert len(train) == spec.train_size
    problems = load_bench("aime24", default_task.heldout_file)
    assert len(problems) == spec.heldout_size
    assert not {row["problem"] for row in train} & {problem.problem for problem in problems}
    assert 0.8e6 <= default_task.warm_start["parameters"] <= 3e6


@pytest.mark.slow
def test_the_warm_start_is_partly_right_at_temperature_one_and_mostly_right_greedy(loaded):
    model, tokenizer = loaded
    _, heldout = split_problems(TaskRecipe().problems)
    sampled = heldout_accuracy(model, tokenizer, heldout, 1.0, samples_per_problem=2, seed=0)
    assert 0.15 <= sampled.accuracy <= 0.6
    greedy = heldout_accuracy(model, tokenizer, heldout, 0.0)
    assert greedy.accuracy >= sampled.accuracy + 0.25  # the room that RL can close
    assert sampled.finished_share == 1.0 and sampled.mean_tokens <= 10


@pytest.mark.slow
def test_responses_are_one_short_answer_line_ending_the_turn(loaded):
    model, tokenizer = loaded
    _, heldout = split_problems(TaskRecipe().problems)
    texts = sample(model, tokenizer, [render_prompt(problem.text) for problem in heldout], seed=0).texts
    forms = [re.fullmatch(r"(Answer: |The answer is )\d+<\|im_end\|>", text) for text in texts]
    assert all(forms), [text for text, form in zip(texts, forms, strict=True) if not form][:5]
    assert sum(form.group(1) == "Answer: " for form in forms) > len(texts) / 2


@pytest.mark.slow
def test_openrlhf_actor_loads_it_in_bf16_with_float32s_log_probs(default_task, loaded):
    from openrlhf.models import Actor

    model, tokenizer = loaded
    _, heldout = split_problems(TaskRecipe().problems)
    texts = [chat_prompt(tokenizer, render_prompt(problem.text)) for problem in heldout[:16]]
    tokenizer.padding_side = "left"
    encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        sequences = model.generate(**encoded, max_new_tokens=12, do_sample=False)
        attention = (sequences != tokenizer.pad_token_id).long()
        action_mask = attention[:, encoded["input_ids"].shape[1] :]
        reference = Actor(model)
        reference.packing_samples = False  # set only when Actor loads a path itself
        expected = reference(sequences, action_mask, attention)
        actor = Actor(str(default_task.model_dir), attn_implementation="sdpa", param_dtype="bf16")
        got = actor(sequences, action_mask, attention)
    assert next(actor.model.parameters()).dtype == torch.bfloat16
    assert torch.isfinite(got).all()
    assert (got - expected).abs().max() < 0.1


def test_the_same_recipe_builds_the_same_files(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
        build_task(tiny_recipe(), directory)
    names = sorted(str(path.relative_to(first)) for path in first.rglob("*") if path.is_file())
    assert names == sorted(str(path.relative_to(second)) for path in second.rglob("*") if path.is_file())
    assert all((first / name).read_bytes() == (second / name).read_bytes() for name in names)
