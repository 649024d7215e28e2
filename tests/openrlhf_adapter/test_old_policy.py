"""One full InfoPPO update in a single CPU process, on real OpenRLHF models.

A tiny random Qwen3 (built from a config, tokenizer trained here) in OpenRLHF's ``Actor`` gives the
old log-probs and entropy in one forward pass; rho -> information-time GAE with values from an
OpenRLHF critic -> adaptive-clip loss (OpenRLHF's PolicyLoss via InfoPolicyLoss) -> AdamW steps.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from densities import information_density
from openrlhf_fixtures import method_settings
from tiny_model import build_tiny_model

from infoppo_cli.infotime import adaptive_clip_bounds, info_time_gae
from infoppo_cli.openrlhf_adapter.old_policy import install_chunked_entropy, old_policy_forward
from infoppo_cli.openrlhf_adapter.policy_loss import InfoPolicyLoss


@pytest.fixture(autouse=True)
def upstream_entropy(monkeypatch):
    """``install_chunked_entropy`` rebinds a module global of OpenRLHF: each test starts from upstream's
    ``compute_entropy`` and puts back what it found, so no later test (here or elsewhere) sees a patch."""
    import openrlhf.models.actor as actor_module

    assert not hasattr(actor_module.compute_entropy, "upstream"), "an earlier test left the patch installed"
    monkeypatch.setattr(actor_module, "compute_entropy", actor_module.compute_entropy)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen3"))


@pytest.fixture(scope="module")
def rollout(model_dir):
    """Prompts + sampled responses, left-padded prompts and right-padded responses as OpenRLHF makes them."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    prompts = ["Solve 3 + 4 = ?", "Find the sum of all integers 12"]
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    torch.manual_seed(0)
    out = model.generate(**enc, max_new_tokens=12, do_sample=True, pad_token_id=tokenizer.pad_token_id)
    prompt_len = enc["input_ids"].shape[1]
    response = out[:, prompt_len:]
    ends = (response == tokenizer.eos_token_id).int().argmax(dim=1)
    lengths = torch.where((response == tokenizer.eos_token_id).any(dim=1), ends + 1, response.shape[1])
    action_mask = torch.arange(response.shape[1])[None, :] < lengths[:, None]
    attention_mask = torch.cat([enc["attention_mask"], action_mask.long()], dim=1)
    return out, action_mask, attention_mask


def test_old_policy_log_probs_and_entropy_come_from_one_forward(model_dir, rollout):
    from openrlhf.models import Actor

    sequences, action_mask, attention_mask = rollout
    install_chunked_entropy(chunk_size=5)
    actor = Actor(str(model_dir), attn_implementation="eager", param_dtype="bf16")
    log_probs, entropy = old_policy_forward(actor, sequences, action_mask, attention_mask, "cpu")
    assert log_probs.shape == entropy.shape == action_mask.shape
    with torch.no_grad():
        plain = actor(sequences, action_mask, attention_mask)
        logits = actor(sequences, None, attention_mask, return_output=True)["logits"][:, :-1].float()
    assert torch.allclose(log_probs, plain)
    logp = torch.log_softmax(logits, -1)
    naive = -(logp.exp() * logp).sum(-1)[:, -action_mask.shape[1] :] * action_mask
    assert torch.allclose(entropy, naive, atol=1e-4)
    assert torch.all(entropy[~action_mask] == 0) and torch.all(entropy[action_mask] > 0)
    assert actor.training  # train mode restored


def test_one_full_infoppo_update(model_dir, rollout):
    from openrlhf.models import Actor, PolicyLoss, get_llm_for_sequence_regression
    from openrlhf.models.utils import compute_reward

    sequences, action_mask, attention_mask = rollout
    torch.manual_seed(0)
    install_chunked_entropy(chunk_size=7)
    actor = Actor(str(model_dir), attn_implementation="eager", param_dtype="bf16")
    critic = get_llm_for_sequence_regression(
        str(model_dir), "critic", attn_implementation="eager", param_dtype="bf16", init_value_head=True
    )

    old_log_probs, entropy = old_policy_forward(actor, sequences, action_mask, attention_mask, "cpu")
    with torch.no_grad():
        values = critic(sequences, action_mask, attention_mask).float() * action_mask
    rho = information_density(entropy, action_mask, "batch")
    token_rewards = compute_reward(
        torch.tensor([1.0, 0.0]), 0.0, torch.zeros_like(values), action_mask=action_mask
    )
    advantages, returns = info_time_gae(token_rewards, values, rho, action_mask, 0.999, 0.99)
    assert torch.isfinite(advantages).all() and torch.isfinite(returns).all()

    settings = method_settings("infoppo", eps_low_info=0.2, eps_high_info=0.28)
    loss_fn = InfoPolicyLoss(PolicyLoss(), settings)
    optimizer = torch.optim.AdamW(actor.parameters(), lr=5e-2)
    before = [p.detach().clone() for p in actor.parameters()]
    for _ in range(3):
        experience = SimpleNamespace(info_rho=rho, info={})
        loss_fn.experience = experience
        log_probs = actor(sequences, action_mask, attention_mask)
        loss = loss_fn(log_probs, old_log_probs, advantages, action_mask=action_mask)[0]
        assert torch.isfinite(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    changed = sum(not torch.equal(b, p.detach()) for b, p in zip(before, actor.parameters(), strict=True))
    assert changed > 0
    lower, upper = adaptive_clip_bounds(rho, 0.2, 0.28)
    ratio = (log_probs.detach().float() - old_log_probs).exp()
    valid = action_mask
    frac_up = ((ratio > upper) & (advantages > 0) & valid).sum() / valid.sum()
    frac_low = ((ratio < lower) & (advantages < 0) & valid).sum() / valid.sum()
    assert float(experience.info["clip_frac_upper"]) == pytest.approx(float(frac_up))
    assert float(experience.info["clip_frac_lower"]) == pytest.approx(float(frac_low))
    assert float(experience.info["clip_upper_mean"]) == pytest.approx(float(upper[valid].mean()), rel=1e-5)
    assert 1.0 <= float(experience.info["clip_upper_mean"]) <= 1.28 + 1e-6
    assert 1 / (1 + math.log(1.2)) - 1e-6 <= float(experience.info["clip_lower_mean"]) <= 1.0
    assert frac_up + frac_low > 0  # the third step did move ratios beyond their bounds


def _upstream_actor_trainer(actor, loss_fn, optimizer):
    """OpenRLHF's own ``ActorPPOTrainer.training_step`` bound to a minimal CPU trainer (DeepSpeed's
    CUDA-only engine calls replaced by plain backward/step)."""
    from functools import partial

    from openrlhf.trainer.ray.ppo_actor import ActorPPOTrainer

    args = SimpleNamespace(
        actor=SimpleNamespace(entropy_coef=0.0),  # what dapo-ft's plan sets: entropy returned, no bonus
        algo=SimpleNamespace(kl=SimpleNamespace(use_loss=False)),
        train=SimpleNamespace(dynamic_batch_enable=False),
    )

    def optimizer_step(optim, model, scheduler, name):
        optim.step()
        optim.zero_grad()

    strategy = SimpleNamespace(
        ring_attn_group=None,
        backward=lambda loss, model, optim: loss.backward(),
        optimizer_step=optimizer_step,
        get_grad_norm=lambda model: 0.0,
    )
    trainer = SimpleNamespace(
        actor=actor,
        actor_loss_fn=loss_fn,
        args=args,
        strategy=strategy,
        aux_loss=False,
        ema_model=None,
        actor_optim=optimizer,
        actor_scheduler=SimpleNamespace(get_last_lr=lambda: [1e-2]),
    )
    trainer.training_step = partial(ActorPPOTrainer.training_step, trainer)
    return trainer


def test_dapo_ft_masks_by_the_current_policy_in_openrlhf_training_step(model_dir, rollout):
    """Through upstream's ``training_step``: the mask is the top 20% (k rounded up) of the entropy of
    the very forward that computes the loss, and it follows the policy as it changes."""
    from openrlhf.models import Actor, PolicyLoss
    from openrlhf.trainer.ppo_utils.experience import Experience

    from infoppo_cli.infotime import high_entropy_mask
    from infoppo_cli.openrlhf_adapter.policy_loss import install_info_loss

    sequences, action_mask, attention_mask = rollout
    torch.manual_seed(1)
    install_chunked_entropy(chunk_size=7, entropy_gradient=False)
    actor = Actor(str(model_dir), attn_implementation="eager", param_dtype="bf16")
    old_log_probs, _ = old_policy_forward(actor, sequences, action_mask, attention_mask, "cpu")
    seen_masks = []

    class RecordingLoss(PolicyLoss):
        def forward(self, *args, action_mask=None, **kwargs):
            seen_masks.append(action_mask.clone())
            return super().forward(*args, action_mask=action_mask, **kwargs)

    trainer = _upstream_actor_trainer(
        actor, RecordingLoss(0.2, 0.28), torch.optim.AdamW(actor.parameters(), 5e-2)
    )
    settings = method_settings("dapo-ft")
    install_info_loss(trainer, settings)
    advantages = torch.randn(action_mask.shape, generator=torch.Generator().manual_seed(3)) * action_mask
    for step in range(2):
        with torch.no_grad():  # the policy as it is right before this step
            logits = actor(sequences, None, attention_mask, return_output=True)["logits"][:, :-1].float()
        logp = torch.log_softmax(logits, -1)
        current = -(logp.exp() * logp).sum(-1)[:, -action_mask.shape[1] :]
        experience = Experience(
            sequences=sequences,
            attention_mask=attention_mask,
            action_mask=action_mask,
            action_log_probs=old_log_probs,
            advantages=advantages,
        )
        result = trainer.training_step(experience, 0.0, step, {"batch_num_tokens": float(action_mask.sum())})
        expected = action_mask & high_entropy_mask(current, action_mask, 0.2)
        assert torch.equal(seen_masks[-1], expected)
        n = int(action_mask.sum())
        assert int(expected.sum()) == math.ceil(0.2 * n)
        assert float(result["metrics"]["high_entropy_token_frac"]) == pytest.approx(math.ceil(0.2 * n) / n)
        assert "entropy_loss" in result["metrics"]  # upstream logs the current entropy it returned
    assert not torch.equal(seen_masks[0], seen_masks[1])  # the mask moved with the policy
