"""The vLLM backend: its logic with ``LLM`` a recorder, and vLLM's CPU build generating for real."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest
from cli_process import run_infoppo

from infoppo_cli.errors import UsageError
from infoppo_cli.eval import backends, generation
from infoppo_cli.eval.generation import Completion, GenerationRequest, SamplingSettings, sample_seed
from infoppo_cli.eval.vllm_backend import completion_from_vllm, vllm_engine_kwargs, vllm_sampling_params


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


def test_vllm_sampling_params_are_one_sample_with_its_own_seed():
    """Built by vLLM's own class, which refuses a misspelt option."""
    from vllm import SamplingParams

    request = GenerationRequest("aime24/3", "prompt", (4, 5, 6), seed=1234)
    params = vllm_sampling_params(SamplingSettings(temperature=0.6, top_p=0.7, max_tokens=10240), request, 5)
    expected = SamplingParams(
        n=1, temperature=0.6, top_p=0.7, max_tokens=10240, seed=sample_seed(1234, "aime24/3", 5)
    )
    assert type(params) is SamplingParams and params == expected  # every other option at vLLM's default


def _vllm_output(text, n_tokens, reason):
    return SimpleNamespace(
        outputs=[SimpleNamespace(index=0, text=text, token_ids=list(range(n_tokens)), finish_reason=reason)]
    )


def test_completion_from_vllm_keeps_the_sample_index_and_refuses_aborts():
    request = GenerationRequest("aime25/I-1", "p", (8, 9, 10), seed=0)
    assert completion_from_vllm(request, 9, _vllm_output("b", 3, "stop")) == Completion(
        "aime25/I-1", 9, "b", 3, "stop"
    )
    assert completion_from_vllm(request, 8, _vllm_output("a", 10, "length")).finish_reason == "length"
    with pytest.raises(RuntimeError, match="'abort'"):
        completion_from_vllm(request, 10, _vllm_output("c", 1, "abort"))
    two = SimpleNamespace(outputs=_vllm_output("a", 1, "stop").outputs * 2)
    with pytest.raises(RuntimeError, match="2 outputs"):
        completion_from_vllm(request, 8, two)


def test_vllm_backend_flow_with_a_recording_engine(monkeypatch, tiny_model_dir):
    """The whole VLLMBackend path on a GPU machine, with vllm.LLM replaced by a recorder."""
    calls = {}

    class RecordingLLM:
        def __init__(self, **kwargs):
            calls["init"] = kwargs
            calls["generate"] = []

        def generate(self, prompts, params, use_tqdm):
            calls["generate"].append((prompts, params, use_tqdm))
            return [_vllm_output(f"seed {p.seed}", 5, "stop") for p in params]

    monkeypatch.setattr(generation, "cuda_available", lambda: True)
    monkeypatch.setattr("infoppo_cli.resources.installed_vllm", lambda: ("vllm", "0.29.0"))  # its CUDA build
    monkeypatch.setattr(sys.modules["vllm"], "LLM", RecordingLLM)
    backend = backends.load_backend("vllm", str(tiny_model_dir), tensor_parallel=2, seed=5)
    backend.chunk_prompts = 2
    requests = [
        GenerationRequest(f"b/{i}", backend.format_prompt(f"{i}+1?", "dapo"), (0, 1), seed=5)
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
    assert [p.seed for p in params] == [sample_seed(5, f"b/{i}", s) for i in range(2) for s in (0, 1)]
    assert all(p.n == 1 and p.max_tokens == 32 for p in params)
    last = batches[-1][-1]
    assert last == Completion("b/2", 1, f"seed {sample_seed(5, 'b/2', 1)}", 5, "stop")


def test_on_a_cpu_an_engine_is_one_eager_process_with_whole_prefills():
    kwargs = vllm_engine_kwargs("m", 1, 3, on_cpu=True)
    assert kwargs["enforce_eager"] and kwargs["distributed_executor_backend"] == "uni"
    assert kwargs["enable_chunked_prefill"] is False  # a seeded request's generator cannot rewind on a CPU
    with pytest.raises(UsageError, match="--engines N"):
        vllm_engine_kwargs("m", 2, 3, on_cpu=True)


def _eval(out, *args) -> dict:
    """``infoppo eval`` as a user runs it (a child process: vLLM writes to the real standard output)."""
    done = run_infoppo(
        "eval", "--bench", "arithmetic", "--samples", "4", "--out", str(out), *args, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.slow
def test_vllm_on_the_cpu_agrees_with_transformers_within_sampling_noise(task_cache, tmp_path):
    """The tiny task's held-out set (200 problems x 4 samples), the same model, seed and sampling settings:
    vLLM's CPU build in one process, on two data-parallel Ray engines, and transformers. Samples differ
    (each backend draws its own random numbers), their accuracy may not: it stays within three standard
    errors of the difference."""
    model = str(task_cache.model_dir)
    vllm = _eval(tmp_path / "vllm", "--model", model)
    hf = _eval(tmp_path / "hf", "--model", model, "--backend", "hf")
    engines = _eval(tmp_path / "engines", "--model", model, "--engines", "2")
    assert vllm["settings"]["backend"] == engines["settings"]["backend"] == "vllm"
    scores = {
        name: run["benches"]["arithmetic"] for name, run in [("vllm", vllm), ("hf", hf), ("2", engines)]
    }
    for name in ("vllm", "2"):
        a, b = scores[name], scores["hf"]
        noise = (a["mean@k_se"] ** 2 + b["mean@k_se"] ** 2) ** 0.5
        assert abs(a["mean@k"] - b["mean@k"]) < 3 * noise, (name, a["mean@k"], b["mean@k"], noise)
        assert a["samples"] == b["samples"] == 800
