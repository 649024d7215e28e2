"""The teacher-forced entropies equal a float64 transformers reference to 1e-4 per token."""

from __future__ import annotations

import pytest
import torch
from inspect_fixtures import response_rows

from infoppo_cli.errors import UsageError
from infoppo_cli.inspect import entropy as fwd
from infoppo_cli.inspect.responses import Item
from infoppo_cli.inspect.run import rendered_prompts


def _reference(model_dir, item: fwd.Tokenized) -> torch.Tensor:
    """Float64, one unpadded sequence, the full logits and an explicit softmax."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64).eval()
    ids = torch.tensor([item.prompt_ids + item.response_ids])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0]
    start = len(item.prompt_ids) - 1
    logp = torch.log_softmax(logits[start : start + len(item.response_ids)], dim=-1)
    return -(logp.exp() * logp).sum(-1)


@pytest.fixture(scope="module")
def tokenized(sharp_model):
    policy = fwd.load_policy(str(sharp_model), device="cpu")
    items = [Item(str(r["id"]), str(r["prompt"]), str(r["response"])) for r in response_rows(6)]
    return policy, rendered_prompts(policy.tokenizer, items, "dapo")


@pytest.mark.parametrize("plain_head", [True, False], ids=["chunked-head", "model-logits"])
def test_entropy_matches_float64_reference_in_padded_batches(sharp_model, tokenized, plain_head, monkeypatch):
    policy, items = tokenized
    monkeypatch.setattr(fwd, "_plain_head", lambda _policy: plain_head)
    got = fwd.response_entropies(policy, items)  # one batch, right-padded to the longest
    assert len({len(i.prompt_ids) + len(i.response_ids) for i in items}) > 1, "batch must need padding"
    for item, values in zip(items, got, strict=True):
        want = _reference(sharp_model, item)
        assert values.shape == (len(item.response_ids),)
        torch.testing.assert_close(values.double(), want, atol=1e-4, rtol=0)
    spread = torch.cat(got)
    assert spread.max() - spread.min() > 2.0, "the sharpened model must give varied entropies"


def test_prompt_rendered_with_template_and_chat_template(tokenized):
    policy, items = tokenized
    text = policy.tokenizer.decode(list(items[0].prompt_ids))
    assert text.startswith("<|im_start|>user\nSolve the following math problem step by step.")
    assert "What is 0 + 0?" in text and text.endswith("<|im_start|>assistant\n")


def test_batches_keep_to_the_token_budget():
    items = [fwd.Tokenized((1,) * 5, (2,) * n) for n in (1, 30, 3, 12, 7, 60)]
    batches = list(fwd.batches(items, max_tokens=40))
    assert sorted(i for b in batches for i in b) == list(range(6))
    for batch in batches:
        width = max(len(items[i].prompt_ids) + len(items[i].response_ids) for i in batch)
        assert len(batch) == 1 or width * len(batch) <= 40


def test_a_model_that_cannot_load_is_a_usage_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UsageError, match="cannot load the model"):
        fwd.load_policy(str(tmp_path))
    with pytest.raises(UsageError, match="no such directory"):
        fwd.load_policy(str(tmp_path / "missing"))
