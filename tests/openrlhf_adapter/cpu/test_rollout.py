"""The CPU rollout engine: vLLM's generate interface on transformers, batched, weights from the actor."""

from __future__ import annotations

import asyncio

import pytest
import torch
from tiny_model import build_tiny_model

from infoppo_cli.openrlhf_adapter.cpu.rollout import CpuRolloutEngine, parameter_digest
from infoppo_cli.openrlhf_adapter.cpu.stand_ins import SamplingParams


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), sharpen=8.0)


@pytest.fixture
def engine(model_dir):
    return CpuRolloutEngine(str(model_dir), seed=0, max_model_len=64)


def _prompt(engine, text="What is 2 + 3?") -> list[int]:
    return engine.tokenizer(text, add_special_tokens=False)["input_ids"]


async def _many(engine, prompts, params):
    return await asyncio.gather(*(engine.generate(p, params) for p in prompts))


def test_concurrent_requests_are_answered_in_one_batch(engine, monkeypatch):
    calls = []
    sample = engine._sample
    monkeypatch.setattr(
        engine, "_sample", lambda prompts, params: calls.append(len(prompts)) or sample(prompts, params)
    )
    prompts = [_prompt(engine, f"What is {i} + {i}?") for i in range(6)]
    outputs = asyncio.run(_many(engine, prompts, SamplingParams(max_tokens=5, temperature=1.0)))
    assert calls == [6] and len(outputs) == 6
    for output in outputs:
        completion = output.outputs[0]
        assert 1 <= len(completion.token_ids) <= 5 and completion.finish_reason in ("stop", "length")
        if completion.finish_reason == "stop":
            assert completion.token_ids[-1] in engine.stop_ids  # vLLM keeps the stop token
        else:
            assert len(completion.token_ids) == 5 and not set(completion.token_ids) & set(engine.stop_ids)


def test_greedy_is_deterministic_and_matches_transformers(engine, model_dir):
    from transformers import AutoModelForCausalLM

    prompt = _prompt(engine)
    params = SamplingParams(max_tokens=8, temperature=0.0, ignore_eos=True)
    first = asyncio.run(engine.generate(prompt, params)).outputs[0]
    reference = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16).float()
    reference = reference.generate(
        torch.tensor([prompt]), do_sample=False, max_new_tokens=8, min_new_tokens=8
    )
    assert first.token_ids == reference[0, len(prompt) :].tolist() and first.finish_reason == "length"


def test_logprobs_are_returned_when_asked_for(engine):
    output = asyncio.run(engine.generate(_prompt(engine), SamplingParams(max_tokens=4, logprobs=1))).outputs[
        0
    ]
    assert len(output.logprobs) == len(output.token_ids)
    for token, entry in zip(output.token_ids, output.logprobs, strict=True):
        assert entry[token].logprob <= 0.0


def test_update_weights_loads_the_actors_parameters(engine, model_dir):
    from transformers import AutoModelForCausalLM

    trained = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    with torch.no_grad():
        for param in trained.parameters():
            param.add_(0.01 * torch.randn_like(param))
    assert parameter_digest(trained) != engine.weights_digest()
    state = {name: param.detach().clone() for name, param in trained.named_parameters()}
    assert engine.update_weights(state) == 1
    assert engine.weights_digest() == parameter_digest(trained)
    with pytest.raises(ValueError, match="unexpected"):
        engine.update_weights({**state, "not.a.parameter": torch.zeros(1)})


def test_the_sampling_options_are_vllms(engine):
    with pytest.raises(TypeError):
        SamplingParams(max_tokens=4, no_such_option=1)
    params = SamplingParams(max_tokens=6, top_k=-1, top_p=0.9, temperature=0.7, min_tokens=3)
    output = asyncio.run(engine.generate(_prompt(engine), params)).outputs[0]
    assert 3 <= len(output.token_ids) <= 6
