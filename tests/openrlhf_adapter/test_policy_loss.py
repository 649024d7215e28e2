"""The actor's loss with infoppo's per-token bounds (and DAPO-FT's mask) against the core maths."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from clip_reference import info_clip_policy_loss
from openrlhf_fixtures import method_settings

from infoppo_cli.infotime import (
    adaptive_clip_bounds,
    clip_statistics,
    high_entropy_mask,
)
from infoppo_cli.openrlhf_adapter.policy_loss import InfoPolicyLoss, install_info_loss

INFOPPO = method_settings("infoppo")
PAPER_EPS = (INFOPPO.eps_low_info, INFOPPO.eps_high_info)


def batch(seed=0, b=3, a=10):
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(b, a, generator=g) * 2
    new = (old + torch.randn(b, a, generator=g)).requires_grad_(True)
    adv = torch.randn(b, a, generator=g)
    mask = torch.arange(a)[None, :] < torch.tensor([10, 6, 3])[:, None]
    rho = torch.rand(b, a, generator=g) * mask
    entropy = torch.rand(b, a, generator=g) * 4 * mask
    experience = SimpleNamespace(info_rho=rho, old_entropy=entropy, info={})
    return new, old, adv, mask, experience


@pytest.mark.parametrize("eps", [(10.0, 20.0), (0.2, 0.28)])
def test_adaptive_clip_loss_equals_core_loss(eps):
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, experience = batch()
    upstream = PolicyLoss(clip_eps_low=0.2, clip_eps_high=0.28)
    loss_fn = InfoPolicyLoss(upstream, method_settings("infoppo", eps_low_info=eps[0], eps_high_info=eps[1]))
    loss_fn.experience = experience
    loss, clip_ratio, *_ = loss_fn(new, old, adv, action_mask=mask)
    expected, stats = info_clip_policy_loss(new, old, adv, experience.info_rho, mask, *eps)
    assert torch.allclose(loss, expected, atol=1e-6)
    assert (upstream.clip_eps_low, upstream.clip_eps_high) == (0.2, 0.28)  # restored after the call
    for name, value in stats.items():
        assert float(experience.info[name]) == pytest.approx(value)
        assert experience.info[name].dim() == 0  # 0-d: OpenRLHF logs it token-weighted
    (g1,) = torch.autograd.grad(loss, new)
    (g2,) = torch.autograd.grad(expected, new)
    assert torch.allclose(g1, g2, atol=1e-6)


def test_adaptive_clip_keeps_openrlhf_token_normalisation():
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, experience = batch(seed=1)
    loss_fn = InfoPolicyLoss(PolicyLoss(), method_settings("infoppo"))
    loss_fn.experience = experience
    global_tokens = 50.0  # the whole gradient-accumulation window, as OpenRLHF passes it
    loss = loss_fn(new, old, adv, action_mask=mask, batch_num_tokens=global_tokens)[0]
    mean_loss, _ = info_clip_policy_loss(new, old, adv, experience.info_rho, mask, *PAPER_EPS)
    assert torch.allclose(loss, mean_loss * mask.sum() / global_tokens, atol=1e-6)


DAPO_FT = method_settings("dapo-ft")


def test_dapo_ft_trains_only_the_high_entropy_tokens():
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, experience = batch(seed=2)
    loss_fn = InfoPolicyLoss(PolicyLoss(0.2, 0.28), DAPO_FT)
    loss_fn.experience = experience
    prompt_columns = torch.rand(3, 4) * 9  # Actor.forward's entropy spans prompt positions too
    loss_fn.current_entropy = torch.cat([prompt_columns, experience.old_entropy], dim=1)
    loss = loss_fn(new, old, adv, action_mask=mask, batch_num_tokens=float(mask.sum()))[0]
    keep = high_entropy_mask(experience.old_entropy, mask, 0.2)
    reference = PolicyLoss(0.2, 0.28)(new, old, adv, action_mask=mask & keep)[0]
    assert torch.allclose(loss, reference, atol=1e-6)
    (grad,) = torch.autograd.grad(loss, new)
    assert torch.all(grad[~keep] == 0) and grad[keep].abs().sum() > 0
    assert float(experience.info["high_entropy_token_frac"]) == pytest.approx(float(keep.sum() / mask.sum()))


def test_packed_micro_batch_keeps_mostly_the_high_entropy_response():
    """Top-k is taken over the whole micro-batch, not per response (80/20 fork)."""
    from openrlhf.models.loss import PolicyLoss

    g = torch.Generator().manual_seed(5)
    mask = torch.ones(2, 40, dtype=torch.bool)
    entropy = torch.stack([2.0 + torch.rand(40, generator=g), 0.5 * torch.rand(40, generator=g)])
    entropy[1, 7] = 9.0  # one very uncertain token in the confident response
    loss_fn = InfoPolicyLoss(PolicyLoss(0.2, 0.28), DAPO_FT)
    loss_fn.experience, loss_fn.current_entropy = SimpleNamespace(info={}), entropy
    kept_mask, _ = loss_fn._high_entropy_only(torch.zeros(2, 40), mask, {})
    assert int(kept_mask.sum()) == 16  # ceil(0.2 * 80)
    assert int(kept_mask[0].sum()) == 15 and kept_mask[1, 7] and int(kept_mask[1].sum()) == 1


@pytest.mark.parametrize(("tokens", "kept"), [(1, 1), (5, 1), (6, 2), (11, 3), (10, 2)])
def test_k_rounds_up(tokens, kept):
    from openrlhf.models.loss import PolicyLoss

    mask = torch.arange(12)[None, :] < tokens
    loss_fn = InfoPolicyLoss(PolicyLoss(), DAPO_FT)
    loss_fn.experience, loss_fn.current_entropy = SimpleNamespace(info={}), torch.rand(1, 12)
    kept_mask, _ = loss_fn._high_entropy_only(torch.zeros(1, 12), mask, {})
    assert int(kept_mask.sum()) == kept and not (kept_mask & ~mask).any()


def test_loss_is_the_token_mean_over_the_kept_tokens():
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, experience = batch(seed=6)
    loss_fn = InfoPolicyLoss(PolicyLoss(0.2, 0.28), DAPO_FT)
    loss_fn.experience, loss_fn.current_entropy = experience, experience.old_entropy
    loss = loss_fn(new, old, adv, action_mask=mask, batch_num_tokens=float(mask.sum()), dp_size=1)[0]
    keep = high_entropy_mask(experience.old_entropy, mask, 0.2)
    ratio = (new - old).exp()
    per_token = -torch.min(ratio * adv, ratio.clamp(1 - 0.2, 1 + 0.28) * adv).detach()
    by_hand = sum(float(per_token[i, t]) for i, t in keep.nonzero().tolist()) / int(keep.sum())
    assert float(loss.detach()) == pytest.approx(by_hand, rel=1e-5)


def test_the_mask_reads_the_training_forward_not_the_old_policy():
    """``install_info_loss`` hands the loss the entropy of the forward ``training_step`` runs."""
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, experience = batch(seed=7)
    current = torch.rand(3, 10) * mask

    class TrainingForward(torch.nn.Module):
        def forward(self, *args, **kwargs):
            return new, SimpleNamespace(entropy=current)

    def upstream_step(exp, kl_ctl, step, loss_batch_info=None):
        log_probs, _ = trainer.actor(exp)
        return trainer.actor_loss_fn(log_probs, old, adv, action_mask=mask)

    trainer = SimpleNamespace(actor=TrainingForward(), actor_loss_fn=PolicyLoss(0.2, 0.28))
    trainer.training_step = upstream_step
    loss_fn = install_info_loss(trainer, DAPO_FT)
    loss = trainer.training_step(experience, 0.0, 0)[0]
    keep = high_entropy_mask(current, mask, 0.2)
    assert not torch.equal(keep, high_entropy_mask(experience.old_entropy, mask, 0.2))
    assert torch.allclose(loss, PolicyLoss(0.2, 0.28)(new, old, adv, action_mask=mask & keep)[0])
    assert loss_fn.current_entropy is None  # released after the step
    with pytest.raises(RuntimeError, match="training forward's entropy"):
        loss_fn.experience = experience
        loss_fn(new, old, adv, action_mask=mask)


def test_loss_without_an_experience_is_an_error():
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, _ = batch()
    with pytest.raises(RuntimeError, match="experience"):
        InfoPolicyLoss(PolicyLoss(), method_settings())(new, old, adv, action_mask=mask)


def test_training_step_hands_each_micro_batch_to_the_loss():
    from openrlhf.models.loss import PolicyLoss

    seen = []

    def upstream_step(experience, kl_ctl, step, loss_batch_info=None):
        seen.append(trainer.actor_loss_fn.experience)
        return {"step": step}

    trainer = SimpleNamespace(actor_loss_fn=PolicyLoss(), training_step=upstream_step)
    loss = install_info_loss(trainer, method_settings())
    first, second = object(), object()
    assert trainer.training_step(first, 0.0, 0) == {"step": 0}
    trainer.training_step(second, 0.0, 1)
    assert seen == [first, second] and loss.experience is None


def test_clip_statistics_match_bounds_definition():
    new, old, adv, mask, experience = batch(seed=3)
    lower, upper = adaptive_clip_bounds(experience.info_rho, *PAPER_EPS)
    ratio = (new - old).exp()
    stats = clip_statistics(ratio, adv, lower, upper, mask)
    n = mask.sum()
    assert float(stats["clip_frac_upper"]) == pytest.approx(
        float(((ratio > upper) & (adv > 0) & mask).sum() / n)
    )


@pytest.mark.parametrize("name", ["infoppo", "ppo", "someone-elses-method"])
def test_behaviour_follows_the_components_not_the_name(name):
    """The same parts give the same loss whatever the method is called."""
    from openrlhf.models.loss import PolicyLoss

    new, old, adv, mask, experience = batch(seed=8)
    parts = method_settings("infoppo", method=name)  # the adaptive clip, under any name
    adaptive = InfoPolicyLoss(PolicyLoss(0.2, 0.28), parts)
    adaptive.experience = experience
    eps = (parts.eps_low_info, parts.eps_high_info)
    expected, _ = info_clip_policy_loss(new, old, adv, experience.info_rho, mask, *eps)
    assert torch.allclose(adaptive(new, old, adv, action_mask=mask)[0], expected, atol=1e-6)
    fixed = InfoPolicyLoss(PolicyLoss(0.2, 0.28), method_settings("ppo", method=name))
    fixed.experience = experience
    upstream = PolicyLoss(0.2, 0.28)(new, old, adv, action_mask=mask)[0]
    assert torch.equal(fixed(new, old, adv, action_mask=mask)[0], upstream)


def _fork_top_mask(entropy: torch.Tensor, mask: torch.Tensor, ratio: float) -> torch.Tensor:
    """The 80/20 fork's rule written out directly: over every response token of one micro-batch,
    keep the ``max(1, int(n * ratio + 0.9999))`` highest entropies."""
    flat = [(float(entropy[row, col]), row, col) for row, col in mask.nonzero().tolist()]
    k = max(1, int(len(flat) * ratio + 0.9999))
    keep = torch.zeros_like(mask, dtype=torch.bool)
    for _, row, col in sorted(flat, key=lambda item: -item[0])[:k]:
        keep[row, col] = True
    return keep


@pytest.mark.parametrize("gpus", [8, 4, 6])
def test_dapo_ft_pools_the_recipes_micro_batches_whatever_the_gpu_count(gpus):
    """The plan keeps a micro-batch at the recipe's ``8 x (prompt + response)`` tokens on 4 or 6 GPUs
    (more tokens per GPU, ``plan._sequence_parallel``); OpenRLHF packs one DP rank's responses into
    micro-batches of that budget (``get_minimum_num_micro_batch_size``,
    ``get_seqlen_balanced_partitions``); on each, the loss keeps exactly the fork's top 20%."""
    from openrlhf.models.loss import PolicyLoss
    from openrlhf.utils.seqlen_balancing import (
        get_minimum_num_micro_batch_size,
        get_seqlen_balanced_partitions,
    )

    from infoppo_cli.train.plan import _sequence_parallel

    longest = 1024 + 12288  # the 14B preset's prompt + response budget
    flags = {
        "ds.ring_attn_size": 8,
        "actor.num_nodes": 1,
        "actor.num_gpus_per_node": gpus,
        "train.dynamic_batch_enable": True,
        "train.max_tokens_per_gpu": longest,
    }
    _sequence_parallel(flags, overrides={})
    ring, per_gpu = flags["ds.ring_attn_size"], flags["train.max_tokens_per_gpu"]
    assert 8 * longest <= ring * per_gpu < 8 * longest + ring  # the recipe's pool, rounded up

    g = torch.Generator().manual_seed(gpus)
    lengths = (torch.randint(300, 12000, (32,), generator=g)).tolist()  # one rank's 32 responses (scaled)
    count = get_minimum_num_micro_batch_size(lengths, per_gpu, ring, 1)
    groups = get_seqlen_balanced_partitions(lengths, count, equal_size=False)
    assert sum(len(group) for group in groups) == len(lengths)
    for group in groups:
        assert sum(lengths[i] for i in group) <= ring * per_gpu
        width = max(lengths[i] for i in group) // 100  # scaled down: 1 column per 100 tokens
        mask = torch.stack([torch.arange(width) < lengths[i] // 100 for i in group])
        entropy = torch.rand(len(group), width, generator=g) * mask
        loss_fn = InfoPolicyLoss(PolicyLoss(0.2, 0.28), DAPO_FT)
        loss_fn.experience, loss_fn.current_entropy = SimpleNamespace(info={}), entropy
        kept, _ = loss_fn._high_entropy_only(torch.zeros_like(entropy), mask, {})
        assert torch.equal(kept, _fork_top_mask(entropy, mask, 0.2))
