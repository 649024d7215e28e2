"""Generation backends: prompts as in training, sampling on the tiny model, vLLM argument plumbing."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest
from tiny_model import build_tiny_model

from infoppo_cli.data.templates import render_prompt
from infoppo_cli.errors import EnvironmentProblem, UsageError
from infoppo_cli.eval import generation
from infoppo_cli.eval.generation import (
    Completion,
    GenerationRequest,
    HFBackend,
    SamplingSettings,
    build_prompt,
    chat_prompt,
    check_model_reference,
    completions_from_vllm,
    request_seed,
    resolve_backend,
    stop_token_ids,
    trim_at_stop,
    vllm_engine_kwargs,
    vllm_sampling_params,
)


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


@pytest.fixture(scope="module")
def hf_backend(tiny_model_dir):
    return HFBackend(str(tiny_model_dir), batch_size=3)


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


def test_trim_at_stop_keeps_the_first_stop_token_and_drops_padding():
    assert trim_at_stop([5, 6, 2, 3, 3], {2}) == ([5, 6, 2], "stop")
    assert trim_at_stop([2, 2, 2], {2}) == ([2], "stop")
    assert trim_at_stop([5, 6, 7], {2}) == ([5, 6, 7], "length")
    assert trim_at_stop([5, 9, 6], {2, 9}) == ([5, 9], "stop")


def test_stop_token_ids_merge_tokenizer_and_generation_config():
    tok = SimpleNamespace(eos_token_id=2)
    assert stop_token_ids(tok, SimpleNamespace(eos_token_id=[2, 7])) == {2, 7}
    assert stop_token_ids(tok, SimpleNamespace(eos_token_id=None)) == {2}
    with pytest.raises(UsageError, match="end-of-sequence"):
        stop_token_ids(SimpleNamespace(eos_token_id=None), None)


def test_request_seed_is_stable_and_distinguishes_requests():
    assert request_seed(0, "aime24/1", 0) == request_seed(0, "aime24/1", 0)
    seeds = {request_seed(s, k, i) for s in (0, 1) for k in ("aime24/1", "aime24/2") for i in (0, 8)}
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


def test_unloadable_model_is_one_usage_error(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    with pytest.raises(UsageError, match="cannot load"):
        HFBackend(str(tmp_path))


# --------------------------------------------------------------------------- backend choice


@pytest.mark.skipif(generation.cuda_available(), reason="checks the behaviour without a GPU")
def test_vllm_without_gpu_suggests_the_hf_backend():
    with pytest.raises(EnvironmentProblem, match="--backend hf"):
        resolve_backend(None)
    with pytest.raises(EnvironmentProblem, match="--backend hf"):
        resolve_backend("vllm")
    with pytest.raises(EnvironmentProblem, match="--backend hf"):
        generation.VLLMBackend("Qwen/Qwen3-4B-Base")
    assert resolve_backend("hf") == "hf"


def test_default_backend_is_vllm_on_a_gpu_machine(monkeypatch):
    monkeypatch.setattr(generation, "cuda_available", lambda: True)
    assert resolve_backend(None) == "vllm"
    with pytest.raises(UsageError, match="choose one of: vllm, hf"):
        resolve_backend("sglang")


# --------------------------------------------------------------------------- transformers backend


def _requests(
    n_problems: int, samples: tuple[int, ...], seed: int = 0, tokenizer=None
) -> list[GenerationRequest]:
    requests = []
    for i in range(n_problems):
        key = f"bench/{i}"
        prompt = f"<|im_start|>user\nWhat is {i} + {i}?<|im_end|>\n<|im_start|>assistant\n"
        requests.append(GenerationRequest(key, prompt, samples, request_seed(seed, key, samples[0])))
    return requests


def _flatten(batches: list[list[Completion]]) -> list[Completion]:
    return [c for batch in batches for c in batch]


def test_hf_backend_samples_every_requested_index_in_batches(hf_backend):
    sampling = SamplingSettings(temperature=1.0, top_p=1.0, max_tokens=6, seed=0)
    batches = list(hf_backend.generate(_requests(2, (0, 1, 5, 7)), sampling))
    assert [len(b) for b in batches] == [3, 3, 2]  # batch_size 3 over 8 sequences
    completions = _flatten(batches)
    assert [(c.key, c.sample) for c in completions] == [
        (f"bench/{i}", s) for i in range(2) for s in (0, 1, 5, 7)
    ]
    for c in completions:
        assert 1 <= c.num_tokens <= 6
        assert c.finish_reason in ("stop", "length")
        if c.finish_reason == "length":
            assert c.num_tokens == 6
        assert "<|im_end|>" not in c.text and "<|pad|>" not in c.text


def test_hf_backend_is_seeded(hf_backend):
    sampling = SamplingSettings(max_tokens=8, seed=0)
    first = [c.text for c in _flatten(list(hf_backend.generate(_requests(2, (0, 1)), sampling)))]
    again = [c.text for c in _flatten(list(hf_backend.generate(_requests(2, (0, 1)), sampling)))]
    other = [c.text for c in _flatten(list(hf_backend.generate(_requests(2, (0, 1), seed=1), sampling)))]
    assert first == again
    assert first != other
    assert len(set(first)) > 1  # samples of one prompt differ from each other


def test_hf_backend_greedy_repeats_itself(hf_backend):
    sampling = SamplingSettings(temperature=0.0, max_tokens=6)
    texts = [c.text for c in _flatten(list(hf_backend.generate(_requests(1, (0, 1, 2)), sampling)))]
    assert len(set(texts)) == 1


def test_hf_backend_reports_stops_and_counts_the_stop_token(hf_backend, monkeypatch):
    # Make half the vocabulary end a sequence: most samples stop early, through the real generate().
    monkeypatch.setattr(hf_backend, "stop_ids", set(range(0, 1000, 2)))
    sampling = SamplingSettings(max_tokens=8, seed=3)
    completions = _flatten(list(hf_backend.generate(_requests(3, (0, 1, 2)), sampling)))
    stopped = [c for c in completions if c.finish_reason == "stop"]
    assert len(stopped) >= len(completions) // 2
    assert any(c.num_tokens < 8 for c in stopped)
    for c in completions:
        if c.finish_reason == "length":
            assert c.num_tokens == 8


def test_hf_generation_config_ignores_checkpoint_sampling_defaults(hf_backend):
    config = hf_backend.generation_config(SamplingSettings(temperature=0.7, top_p=0.9, max_tokens=12))
    assert (config.do_sample, config.temperature, config.top_p, config.top_k) == (True, 0.7, 0.9, 0)
    assert config.repetition_penalty == 1.0 and config.max_new_tokens == 12
    assert set(config.eos_token_id) == hf_backend.stop_ids


def test_format_prompt_uses_the_template(hf_backend):
    assert (
        hf_backend.format_prompt("2+2?", "raw") == "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
    )


# --------------------------------------------------------------------------- vLLM backend (no GPU needed)


def test_vllm_engine_kwargs():
    assert vllm_engine_kwargs("Qwen/Qwen3-8B-Base", 4, 7) == {
        "model": "Qwen/Qwen3-8B-Base",
        "tensor_parallel_size": 4,
        "seed": 7,
        "dtype": "auto",
        "trust_remote_code": False,
    }
    with pytest.raises(UsageError, match="--tensor-parallel"):
        vllm_engine_kwargs("m", 0, 0)


def test_vllm_sampling_params_ask_for_all_missing_samples_in_one_seeded_request():
    request = GenerationRequest("aime24/3", "prompt", (4, 5, 6), seed=1234)
    params = vllm_sampling_params(SamplingSettings(temperature=1.0, top_p=0.7, max_tokens=10240), request)
    assert type(params).__module__ == sys.modules["vllm"].SamplingParams.__module__
    assert (params.n, params.temperature, params.top_p, params.max_tokens, params.seed) == (
        3,
        1.0,
        0.7,
        10240,
        1234,
    )


def _vllm_output(samples):
    outs = [
        SimpleNamespace(index=i, text=text, token_ids=list(range(n)), finish_reason=reason)
        for i, (text, n, reason) in samples
    ]
    return SimpleNamespace(outputs=outs)


def test_completions_from_vllm_map_samples_by_index():
    request = GenerationRequest("aime25/I-1", "p", (8, 9, 10), seed=0)
    output = _vllm_output([(2, ("c", 4, "stop")), (0, ("a", 10, "length")), (1, ("b", 3, "stop"))])
    assert completions_from_vllm(request, output) == [
        Completion("aime25/I-1", 8, "a", 10, "length"),
        Completion("aime25/I-1", 9, "b", 3, "stop"),
        Completion("aime25/I-1", 10, "c", 4, "stop"),
    ]
    with pytest.raises(RuntimeError, match="expected 3"):
        completions_from_vllm(request, _vllm_output([(0, ("a", 1, "stop"))]))
    aborted = _vllm_output([(0, ("a", 1, "stop")), (1, ("b", 1, "abort")), (2, ("c", 1, "stop"))])
    with pytest.raises(RuntimeError, match="'abort'"):
        completions_from_vllm(request, aborted)


def test_vllm_backend_flow_with_a_recording_engine(monkeypatch, tiny_model_dir):
    """The whole VLLMBackend path with vllm.LLM replaced by a recorder (the real one needs a GPU)."""
    calls = {}

    class RecordingLLM:
        def __init__(self, **kwargs):
            calls["init"] = kwargs
            calls["generate"] = []

        def generate(self, prompts, params, use_tqdm):
            calls["generate"].append((prompts, params, use_tqdm))
            return [
                _vllm_output([(i, (f"answer {i}", 5, "stop")) for i in range(p.n)])
                for p in params  # one RequestOutput per prompt, in order
            ]

    monkeypatch.setattr(generation, "cuda_available", lambda: True)
    monkeypatch.setattr(sys.modules["vllm"], "LLM", RecordingLLM)
    backend = generation.load_backend("vllm", str(tiny_model_dir), tensor_parallel=2, seed=5)
    backend.chunk_prompts = 2
    requests = [
        GenerationRequest(f"b/{i}", backend.format_prompt(f"{i}+1?", "dapo"), (0, 1), seed=i)
        for i in range(3)
    ]
    batches = list(backend.generate(requests, SamplingSettings(max_tokens=32)))
    assert calls["init"] == vllm_engine_kwargs(str(tiny_model_dir), 2, 5)
    assert [len(b) for b in batches] == [4, 2]  # chunks of two prompts x two samples
    prompts, params, use_tqdm = calls["generate"][0]
    assert use_tqdm is False
    assert (
        prompts[0]["prompt_token_ids"]
        == backend.tokenizer(requests[0].prompt, add_special_tokens=False)["input_ids"]
    )
    assert [p.seed for p in params] == [0, 1]
    assert all(p.n == 2 and p.max_tokens == 32 for p in params)
    assert _flatten(batches)[-1] == Completion("b/2", 1, "answer 1", 5, "stop")
