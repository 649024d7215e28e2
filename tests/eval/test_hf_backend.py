"""The transformers backend on CPU with the tiny model: batching, per-sample seeds, stops."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.data.sampler import seeded_generation_config
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.generation import Completion, GenerationRequest, SamplingSettings
from infoppo_cli.eval.hf_backend import HFBackend


@pytest.fixture(scope="module")
def hf_backend(tiny_model_dir):
    return HFBackend(str(tiny_model_dir), batch_size=3)


def test_unloadable_model_is_one_usage_error(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    with pytest.raises(UsageError, match="cannot load"):
        HFBackend(str(tmp_path))


def _requests(
    n_problems: int, samples: tuple[int, ...], seed: int = 0, tokenizer=None
) -> list[GenerationRequest]:
    requests = []
    for i in range(n_problems):
        key = f"bench/{i}"
        prompt = f"<|im_start|>user\nWhat is {i} + {i}?<|im_end|>\n<|im_start|>assistant\n"
        requests.append(GenerationRequest(key, prompt, samples, seed))
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
    sampling = hf_backend.sampling(SamplingSettings(temperature=0.7, top_p=0.9, max_tokens=12), seeds=(1, 2))
    assert sampling.seeds == (1, 2)  # one random stream per sample
    config = seeded_generation_config(sampling)
    # decoding is greedy over what PerSampleSampler leaves: no warper of the checkpoint's own
    assert (config.do_sample, config.temperature, config.top_p, config.top_k) == (False, None, None, None)
    assert config.repetition_penalty == 1.0 and config.max_new_tokens == 12
    assert set(config.eos_token_id) == hf_backend.stop_ids


def test_format_prompt_uses_the_template(hf_backend):
    assert (
        hf_backend.format_prompt("2+2?", "raw") == "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
    )


def _texts(completions):
    return {(c.key, c.sample): c.text for c in completions}


def test_a_sample_does_not_depend_on_its_batch(tiny_model_dir, hf_backend):
    """Seed per sample: batch size 1 or 3, and which other samples are drawn alongside, change nothing."""
    sampling = SamplingSettings(max_tokens=8, seed=7)
    batched = _texts(_flatten(list(hf_backend.generate(_requests(2, (0, 1, 2, 3), seed=7), sampling))))
    single = HFBackend(str(tiny_model_dir), batch_size=1)
    alone = _texts(_flatten(list(single.generate(_requests(2, (1, 3), seed=7), sampling))))
    assert alone == {key: batched[key] for key in alone}
    assert len(set(batched.values())) > 1
