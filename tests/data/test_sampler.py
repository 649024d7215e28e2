"""The transformers sampler: left padding, rows cut after their first stop token, per-row random streams
independent of the batch, torch's global stream with transformers' own sampling, log-probabilities."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from tiny_model import build_tiny_model

from infoppo_cli.data.sampler import (
    PerSampleSampler,
    Sampling,
    left_padded,
    pad_token_id,
    sample_batch,
    stop_token_ids,
    trim_at_stop,
)
from infoppo_cli.errors import UsageError


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    return model, tokenizer


def _prompts(tokenizer, count=3):
    return [
        tokenizer(f"What is {i} + {i}?", add_special_tokens=False)["input_ids"][: 3 + i] for i in range(count)
    ]


def _sampling(tokenizer, **options):
    stops = frozenset(stop_token_ids(tokenizer))
    return Sampling(max_new_tokens=options.pop("max_new_tokens", 6), stop_ids=stops, pad_id=0, **options)


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


def test_the_pad_is_the_tokenizers_else_the_smallest_stop():
    assert pad_token_id(SimpleNamespace(pad_token_id=4), {9, 7}) == 4
    assert pad_token_id(SimpleNamespace(pad_token_id=None), {9, 7}) == 7


def test_prompts_are_padded_on_the_left():
    input_ids, attention_mask = left_padded([[5, 6, 7], [8], []], pad_id=1)
    assert input_ids.tolist() == [[5, 6, 7], [1, 1, 8], [1, 1, 1]]
    assert attention_mask.tolist() == [[1, 1, 1], [0, 0, 1], [0, 0, 0]]


def test_per_sample_sampler_draws_from_the_warped_distribution():
    logits = torch.tensor([[4.0, 3.0, 0.0, -1.0]] * 400)
    settings = SimpleNamespace(temperature=1.0, top_p=0.8)
    out = PerSampleSampler(range(400), settings, "cpu")(None, logits.clone())
    chosen = out.argmax(dim=-1)
    assert torch.isinf(out).sum(dim=-1).eq(3).all()  # exactly one token left per row
    assert set(chosen.tolist()) == {0, 1}  # top-p 0.8 keeps the two likeliest tokens only
    share = chosen.eq(0).float().mean().item()
    expected = 1 / (1 + torch.exp(torch.tensor(-1.0)).item())  # p(0) / (p(0) + p(1))
    assert abs(share - expected) < 0.08
    again = PerSampleSampler(range(400), settings, "cpu")
    assert torch.equal(again(None, logits.clone()).argmax(dim=-1), chosen)


def test_a_row_of_its_own_stream_does_not_depend_on_its_batch(tiny):
    model, tokenizer = tiny
    prompts = _prompts(tokenizer)
    together = sample_batch(model, prompts, _sampling(tokenizer, seeds=(11, 12, 13)))
    alone = sample_batch(model, prompts[1:2], _sampling(tokenizer, seeds=(12,)))
    assert alone[0] == together[1]
    assert len({tuple(row.token_ids) for row in together}) > 1


def test_rows_end_at_a_stop_or_the_budget(tiny):
    model, tokenizer = tiny
    stops = frozenset(range(0, 1000, 2))  # half the vocabulary ends a row
    sampling = Sampling(max_new_tokens=8, stop_ids=stops, pad_id=0, seeds=(1, 2, 3))
    for row in sample_batch(model, _prompts(tokenizer), sampling):
        if row.finish_reason == "stop":
            assert row.token_ids[-1] in stops and not set(row.token_ids[:-1]) & stops
        else:
            assert len(row.token_ids) == 8 and not set(row.token_ids) & stops


def test_the_global_stream_repeats_with_torchs_seed_and_gives_log_probabilities(tiny):
    model, tokenizer = tiny
    sampling = _sampling(tokenizer, temperature=0.8, top_k=5, logprobs=True)
    torch.manual_seed(3)
    first = sample_batch(model, _prompts(tokenizer), sampling)
    torch.manual_seed(3)
    assert sample_batch(model, _prompts(tokenizer), sampling) == first
    for row in first:
        assert len(row.logprobs) == len(row.token_ids) and all(value <= 0.0 for value in row.logprobs)


def test_ignore_eos_runs_past_the_stop_tokens(tiny):
    model, tokenizer = tiny
    every_token = frozenset(range(model.config.vocab_size))
    rows = sample_batch(model, _prompts(tokenizer), Sampling(5, every_token, 0, ignore_eos=True))
    assert all(len(row.token_ids) == 5 and row.finish_reason == "length" for row in rows)


def test_per_row_streams_refuse_what_they_would_ignore(tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="top_k, logprobs"):
        sample_batch(
            model, _prompts(tokenizer), _sampling(tokenizer, seeds=(1, 2, 3), top_k=4, logprobs=True)
        )
