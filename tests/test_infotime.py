"""The information-time core against closed forms, OpenRLHF's own GAE and loss, and properties."""

from __future__ import annotations

import math

import pytest
import torch
from clip_reference import info_clip_policy_loss
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.infotime import (
    adaptive_clip_bounds,
    density_by_batch,
    density_by_response,
    density_by_vocabulary,
    high_entropy_mask,
    info_discount,
    info_time_gae,
    info_time_gae_loop,
    masked_max_entropy,
    token_discount,
    token_entropy,
)


def closed_form_gae(rewards, values, rho, mask, gamma, lambd):
    """A_t = sum_l (gamma*lambd)**(rho_t + ... + rho_{t+l-1}) delta_{t+l}, in float64 (the test reference)."""
    r, v, p, m = (x.double() for x in (rewards, values, rho, mask))
    v, r = v * m, r * m
    batch, length = v.shape
    adv = torch.zeros(batch, length, dtype=torch.float64)
    for b in range(batch):
        for t in range(length):
            total, elapsed = 0.0, 0.0
            for k in range(t, length):
                next_v = float(v[b, k + 1]) if k + 1 < length else 0.0
                delta = float(r[b, k]) + gamma ** float(p[b, k]) * next_v - float(v[b, k])
                total += (gamma * lambd) ** elapsed * delta
                elapsed += float(p[b, k])
            adv[b, t] = total
    adv = adv * m
    return adv, (adv + v) * m


def openrlhf_gae(values, rewards, mask, gamma, lambd):
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker

    return RemoteExperienceMaker.get_advantages_and_returns(None, values, rewards, mask, gamma, lambd)


def right_padded_mask(lengths, width):
    return (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).float()


def left_padded_mask(lengths, width):
    return right_padded_mask(lengths, width).flip(-1)


def random_batch(batch, width, seed=0, mask=None):
    g = torch.Generator().manual_seed(seed)
    rewards = torch.randn(batch, width, generator=g)
    values = torch.randn(batch, width, generator=g)
    rho = torch.rand(batch, width, generator=g)
    mask = torch.ones(batch, width) if mask is None else mask
    return rewards, values, rho * mask, mask


# --------------------------------------------------------------------------- info-time GAE


@pytest.mark.parametrize("gamma,lambd", [(0.999, 0.99), (1.0, 1.0), (0.9, 0.5), (0.5, 0.0)])
@pytest.mark.parametrize("padding", ["right", "left"])
def test_gae_matches_closed_form(gamma, lambd, padding):
    make_mask = right_padded_mask if padding == "right" else left_padded_mask
    mask = make_mask([7, 3, 9, 1], 9)
    rewards, values, rho, mask = random_batch(4, 9, seed=1, mask=mask)
    adv, ret = info_time_gae(rewards, values, rho, mask, gamma, lambd)
    ref_adv, ref_ret = closed_form_gae(rewards, values, rho, mask, gamma, lambd)
    assert torch.allclose(adv.double(), ref_adv, atol=1e-5)
    assert torch.allclose(ret.double(), ref_ret, atol=1e-5)


@pytest.mark.parametrize("gamma,lambd", [(1.0, 0.95), (0.999, 0.99), (0.9, 0.0), (1.0, 1.0)])
def test_rho_equal_to_mask_is_openrlhf_standard_gae(gamma, lambd):
    mask = right_padded_mask([64, 10, 33], 64)
    rewards, values, _, mask = random_batch(3, 64, seed=2, mask=mask)
    rewards, values, mask = rewards.double(), values.double(), mask.double()
    adv, ret = info_time_gae(rewards, values, mask.clone(), mask, gamma, lambd)
    up_adv, up_ret = openrlhf_gae(values * mask, rewards, mask, gamma, lambd)
    assert torch.allclose(adv, up_adv * mask, atol=1e-6)
    assert torch.allclose(ret, up_ret * mask, atol=1e-6)
    adv32, _ = info_time_gae(rewards.float(), values.float(), mask.float(), mask.float(), gamma, lambd)
    assert torch.allclose(adv32.double(), up_adv * mask, atol=1e-5)


def test_lambda_zero_is_one_step_td():
    rewards, values, rho, mask = random_batch(3, 20, seed=3)
    rho = rho.clamp(min=0.05)  # (gamma*0)**rho is 0 only for rho > 0
    adv, _ = info_time_gae(rewards, values, rho, mask, 0.97, 0.0)
    next_v = torch.cat([values[:, 1:], torch.zeros(3, 1)], dim=1)
    td = rewards + 0.97**rho * next_v - values
    assert torch.allclose(adv, td, atol=1e-6)


def test_rho_zero_means_no_discounting_at_all():
    mask = right_padded_mask([12, 5], 12)
    rewards, values, _, mask = random_batch(2, 12, seed=4, mask=mask)
    adv, _ = info_time_gae(rewards, values, torch.zeros(2, 12), mask, 0.5, 0.5)
    v, r = values * mask, rewards * mask
    next_v = torch.cat([v[:, 1:], torch.zeros(2, 1)], dim=1)
    delta = r + next_v - v
    suffix_sum = delta.flip(-1).cumsum(-1).flip(-1)
    assert torch.allclose(adv, suffix_sum * mask, atol=1e-5)


def test_outputs_are_zero_off_the_mask():
    mask = left_padded_mask([4, 8, 2], 8)
    rewards, values, rho, mask = random_batch(3, 8, seed=5, mask=mask)
    adv, ret = info_time_gae(rewards, values, rho, mask, 0.99, 0.95)
    assert torch.all(adv[mask == 0] == 0) and torch.all(ret[mask == 0] == 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_input_dtypes(dtype):
    rewards, values, rho, mask = random_batch(2, 40, seed=6)
    cast = [x.to(dtype) for x in (rewards, values, rho)]
    adv, ret = info_time_gae(*cast, mask, 0.999, 0.99)
    assert adv.dtype == torch.promote_types(dtype, torch.float32)
    ref_adv, _ = closed_form_gae(*[x.double() for x in cast], mask, 0.999, 0.99)
    assert torch.allclose(adv.double(), ref_adv, atol=1e-5)


@pytest.mark.parametrize("length", [8192, pytest.param(32768, marks=pytest.mark.slow)])
def test_long_sequences_are_exact_in_float32(length):
    rewards, values, rho, mask = random_batch(2, length, seed=7)
    rewards = rewards * 0.01  # realistic scale: the sum of random deltas stays O(1) over the sequence
    for gamma, lambd in [(0.999, 0.99), (1.0, 1.0)]:
        adv, _ = info_time_gae(rewards, values, rho, mask, gamma, lambd)
        ref, _ = info_time_gae_loop(
            rewards.double(), values.double(), rho.double(), mask.double(), gamma, lambd
        )
        assert (adv.double() - ref).abs().max() <= 1e-5


@pytest.mark.parametrize("gamma,lambd", [(1e-30, 1.0), (0.5, 0.0), (1e-8, 1e-8)])
def test_extreme_discounts_stay_finite_and_exact(gamma, lambd):
    rewards, values, rho, mask = random_batch(2, 300, seed=8)
    rho[:, ::3] = 0.0  # mix certain tokens (no decay) with uncertain ones (near-total decay)
    rho[:, 1::3] = 1e-12
    adv, ret = info_time_gae(rewards, values, rho, mask, gamma, lambd)
    ref, _ = info_time_gae_loop(rewards.double(), values.double(), rho.double(), mask.double(), gamma, lambd)
    assert torch.isfinite(adv).all() and torch.isfinite(ret).all()
    assert (adv.double() - ref).abs().max() <= 1e-5


@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 4),
    width=st.integers(1, 70),
    gamma=st.floats(0.05, 1.0),
    lambd=st.floats(0.0, 1.0),
    seed=st.integers(0, 10_000),
    left=st.booleans(),
)
def test_gae_property_against_closed_form(batch, width, gamma, lambd, seed, left):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, width + 1, (batch,), generator=g).tolist()
    mask = (left_padded_mask if left else right_padded_mask)(lengths, width)
    rewards, values, rho, mask = random_batch(batch, width, seed=seed, mask=mask)
    adv, ret = info_time_gae(rewards, values, rho, mask, gamma, lambd)
    ref_adv, ref_ret = closed_form_gae(rewards, values, rho, mask, gamma, lambd)
    assert torch.allclose(adv.double(), ref_adv, atol=1e-5)
    assert torch.allclose(ret.double(), ref_ret, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(width=st.integers(1, 200), seed=st.integers(0, 10_000), gamma=st.floats(0.5, 1.0))
def test_more_information_never_increases_the_discount(width, seed, gamma):
    g = torch.Generator().manual_seed(seed)
    rho = torch.rand(1, width, generator=g)
    mask = torch.ones(1, width)
    low, high = info_discount(rho * 0.5, mask, gamma), info_discount(rho, mask, gamma)
    assert float(high) <= float(low) + 1e-7
    assert 0.0 <= float(high) <= 1.0


def test_info_discount_is_gamma_to_the_elapsed_information():
    rho = torch.tensor([[0.5, 1.0, 0.25, 0.9], [1.0, 1.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]).float()
    got = info_discount(rho, mask, 0.9)
    assert torch.allclose(got, torch.tensor([0.9**1.75, 0.9**2.0]))


def test_token_discount_is_gamma_to_the_response_length():
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]]).float()
    got = token_discount(mask, 0.9)
    assert torch.allclose(got, torch.tensor([0.9**3, 0.9**2, 1.0]))


@settings(max_examples=40, deadline=None)
@given(width=st.integers(1, 300), seed=st.integers(0, 10_000), gamma=st.floats(0.5, 1.0))
def test_the_token_clock_is_the_info_clock_at_rho_one_and_never_ahead_of_it(width, seed, gamma):
    g = torch.Generator().manual_seed(seed)
    mask = (torch.rand(2, width, generator=g) < 0.8).float()
    rho = torch.rand(2, width, generator=g)
    assert torch.allclose(token_discount(mask, gamma), info_discount(torch.ones_like(rho), mask, gamma))
    assert bool((token_discount(mask, gamma) <= info_discount(rho, mask, gamma) + 1e-6).all())


def test_gae_argument_checks():
    rewards, values, rho, mask = random_batch(2, 5)
    with pytest.raises(ValueError, match="gamma"):
        info_time_gae(rewards, values, rho, mask, 0.0, 0.9)
    with pytest.raises(ValueError, match="lambd"):
        info_time_gae(rewards, values, rho, mask, 0.9, 1.5)
    with pytest.raises(ValueError, match="shapes must agree"):
        info_time_gae(rewards, values[:, :4], rho, mask, 0.9, 0.9)


# --------------------------------------------------------------------------- entropy and density


def naive_entropy(logits):
    logp = torch.log_softmax(logits.double(), dim=-1)
    return -(logp.exp() * logp).sum(-1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
def test_chunked_entropy_equals_naive(dtype, chunk_size):
    logits = (torch.randn(3, 11, 50, generator=torch.Generator().manual_seed(9)) * 4).to(dtype)
    got = token_entropy(logits, chunk_size=chunk_size)
    assert got.shape == (3, 11) and got.dtype == torch.float32
    assert torch.allclose(got.double(), naive_entropy(logits.float()), atol=2e-5)


@pytest.mark.parametrize(("scale", "shift"), [(1.0, 0.0), (5.0, 30.0), (20.0, -50.0)])
def test_float32_entropy_is_within_1e5_of_float64_at_qwen_vocabulary(scale, shift):
    """Centred like logsumexp, the entropy is within 1e-5 nats at V = 151,936 (uncentred: ~1e-3)."""
    generator = torch.Generator().manual_seed(int(scale))
    logits = torch.randn(1, 8, 151_936, generator=generator) * scale + shift
    error = (token_entropy(logits).double() - naive_entropy(logits.double())).abs().max()
    assert float(error) <= 1e-5


def test_entropy_bounds_and_masked_vocabulary():
    uniform = torch.zeros(1, 1, 64)
    one_hot = torch.full((1, 1, 64), -1e4)
    one_hot[..., 3] = 0
    assert torch.allclose(token_entropy(uniform), torch.tensor([[math.log(64)]]))
    assert abs(float(token_entropy(one_hot))) < 1e-5
    masked = torch.zeros(1, 1, 64)
    masked[..., 32:] = float("-inf")
    assert torch.allclose(token_entropy(masked), torch.tensor([[math.log(32)]]))


def test_entropy_builds_no_graph():
    logits = torch.randn(2, 3, 10, requires_grad=True)
    assert not token_entropy(logits).requires_grad


def test_density_modes():
    entropy = torch.tensor([[1.0, 2.0, 4.0], [0.5, 1.0, 9.0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]]).float()
    batch = density_by_batch(entropy, mask, None)
    assert torch.allclose(batch, torch.tensor([[0.25, 0.5, 1.0], [0.125, 0.25, 0.0]]))
    sentence = density_by_response(entropy, mask)
    assert torch.allclose(sentence, torch.tensor([[0.25, 0.5, 1.0], [0.5, 1.0, 0.0]]))
    glob = density_by_vocabulary(entropy, mask, vocab_size=100)
    assert torch.allclose(glob, (entropy / math.log(100)).clamp(max=1) * mask)
    shared = density_by_batch(entropy, mask, max_entropy=8.0)
    assert torch.allclose(shared, entropy * mask / 8.0)
    assert masked_max_entropy(entropy, mask) == 4.0


def test_density_zero_maximum_gives_zero_not_nan():
    entropy = torch.zeros(2, 4)
    mask = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0]]).float()
    for rho in (density_by_batch(entropy, mask, None), density_by_response(entropy, mask)):
        assert torch.equal(rho, torch.zeros(2, 4))


def test_density_rejects_bad_input():
    mask = torch.ones(1, 3)
    for density in (density_by_response, lambda h, m: density_by_batch(h, m, None)):
        with pytest.raises(ValueError, match="NaN"):
            density(torch.tensor([[1.0, float("nan"), 2.0]]), mask)
        with pytest.raises(ValueError, match="infinite"):
            density(torch.tensor([[1.0, float("inf"), 2.0]]), mask)
    with pytest.raises(ValueError, match="vocab_size"):
        density_by_vocabulary(torch.ones(1, 3), mask, None)
    # garbage on padding is ignored
    rho = density_by_batch(torch.tensor([[1.0, 2.0, float("nan")]]), torch.tensor([[1.0, 1.0, 0.0]]), None)
    assert torch.equal(rho, torch.tensor([[0.5, 1.0, 0.0]]))


@settings(max_examples=50, deadline=None)
@given(batch=st.integers(1, 5), width=st.integers(1, 30), seed=st.integers(0, 10_000))
def test_density_is_in_unit_interval(batch, width, seed):
    g = torch.Generator().manual_seed(seed)
    entropy = torch.rand(batch, width, generator=g) * 12
    mask = (torch.rand(batch, width, generator=g) > 0.3).float()
    for rho in (density_by_batch(entropy, mask, None), density_by_response(entropy, mask)):
        assert torch.all((rho >= 0) & (rho <= 1)) and torch.all(rho[mask == 0] == 0)
        if mask.any():
            assert float(rho.max()) == pytest.approx(1.0)


# --------------------------------------------------------------------------- adaptive clipping


def test_clip_bounds_formula():
    lower, upper = adaptive_clip_bounds(torch.tensor([0.0, 1.0, 0.5]), eps_low=10.0, eps_high=20.0)
    assert lower[0] == 1.0 and upper[0] == 1.0
    assert lower[1] == pytest.approx(1 / (1 + math.log(11.0)))
    assert upper[1] == pytest.approx(1 + math.log(21.0))
    assert upper[2] == pytest.approx(1 + math.log(11.0))
    assert lower[1] == pytest.approx(0.294, abs=1e-3) and upper[1] == pytest.approx(4.04, abs=1e-2)


def test_clip_bounds_are_detached_and_checked():
    rho = torch.rand(3, requires_grad=True)
    lower, upper = adaptive_clip_bounds(rho, 10.0, 20.0)
    assert not lower.requires_grad and not upper.requires_grad
    with pytest.raises(ValueError, match="eps_low"):
        adaptive_clip_bounds(rho, eps_low=-1.0, eps_high=20.0)


def loss_inputs(seed=10, batch=3, width=12):
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(batch, width, generator=g) * 3
    new = (old + torch.randn(batch, width, generator=g) * 0.8).requires_grad_(True)
    adv = torch.randn(batch, width, generator=g)
    rho = torch.rand(batch, width, generator=g)
    mask = right_padded_mask([12, 7, 3], width)
    return new, old, adv, rho, mask


@pytest.mark.parametrize("eps", [(10.0, 20.0), (0.2, 0.28), (0.0, 0.0)])
def test_loss_equals_openrlhf_policy_loss_with_per_token_eps(eps):
    from openrlhf.models.loss import PolicyLoss

    eps_low, eps_high = eps
    new, old, adv, rho, mask = loss_inputs()
    ours, stats = info_clip_policy_loss(new, old, adv, rho, mask, eps_low, eps_high)
    lower, upper = adaptive_clip_bounds(rho, eps_low, eps_high)
    upstream = PolicyLoss(clip_eps_low=1 - lower, clip_eps_high=upper - 1)
    theirs = upstream(new, old, adv, action_mask=mask)[0]
    assert torch.allclose(ours, theirs, atol=1e-6)
    (g_ours,) = torch.autograd.grad(ours, new)
    (g_theirs,) = torch.autograd.grad(theirs, new)
    assert torch.allclose(g_ours, g_theirs, atol=1e-6)


def test_loss_statistics_are_consistent_with_the_bounds():
    new, old, adv, rho, mask = loss_inputs(seed=11)
    _, stats = info_clip_policy_loss(new, old, adv, rho, mask, 0.2, 0.28)
    lower, upper = adaptive_clip_bounds(rho, 0.2, 0.28)
    ratio = (new - old).exp().detach()
    valid = mask.bool()
    n = valid.sum()
    assert stats["clip_frac_upper"] == pytest.approx(float(((ratio > upper) & (adv > 0) & valid).sum() / n))
    assert stats["clip_frac_lower"] == pytest.approx(float(((ratio < lower) & (adv < 0) & valid).sum() / n))
    assert stats["clip_upper_mean"] == pytest.approx(float(upper[valid].mean()))
    assert stats["clip_lower_mean"] == pytest.approx(float(lower[valid].mean()))
    assert stats["clip_frac_upper"] + stats["clip_frac_lower"] > 0


def test_gradients_reach_only_log_probs_and_vanish_where_clipped():
    new, old, adv, rho, mask = loss_inputs(seed=12)
    old.requires_grad_(True)
    adv.requires_grad_(True)
    loss, _ = info_clip_policy_loss(new, old, adv, rho, mask, 0.2, 0.28)
    loss.backward()
    assert old.grad is None and adv.grad is None
    lower, upper = adaptive_clip_bounds(rho, 0.2, 0.28)
    ratio = (new - old).exp().detach()
    clipped = ((ratio > upper) & (adv > 0)) | ((ratio < lower) & (adv < 0)) | (mask == 0)
    assert torch.all(new.grad[clipped] == 0)
    assert torch.all(new.grad[~clipped] != 0)


def test_rho_zero_freezes_the_ratio():
    new, old, adv, _, mask = loss_inputs(seed=13)
    loss, stats = info_clip_policy_loss(new, old, adv.abs(), torch.zeros_like(adv), mask, 10.0, 20.0)
    assert stats["clip_upper_mean"] == 1.0 and stats["clip_lower_mean"] == 1.0


# --------------------------------------------------------------------------- DAPO-FT mask


def test_high_entropy_mask_picks_the_top_fraction_of_valid_tokens():
    entropy = torch.tensor([[0.1, 0.9, 0.5, 7.0], [0.8, 0.2, 0.3, 0.4]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]]).float()
    keep = high_entropy_mask(entropy, mask, top_frac=0.2)  # 7 valid tokens -> ceil(1.4) = 2
    assert keep.dtype == torch.bool
    assert keep.tolist() == [[False, True, False, False], [True, False, False, False]]
    assert high_entropy_mask(entropy, mask, top_frac=1.0).tolist() == mask.bool().tolist()
    assert not high_entropy_mask(entropy, torch.zeros_like(mask), 0.2).any()


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 4), width=st.integers(1, 40), frac=st.floats(0.01, 1.0), seed=st.integers(0, 999))
def test_high_entropy_mask_properties(batch, width, frac, seed):
    g = torch.Generator().manual_seed(seed)
    entropy = torch.rand(batch, width, generator=g)
    mask = (torch.rand(batch, width, generator=g) > 0.4).float()
    keep = high_entropy_mask(entropy, mask, frac)
    n = int(mask.sum())
    assert int(keep.sum()) == (math.ceil(frac * n - 1e-9) if n else 0)
    assert not keep[mask == 0].any()
    if keep.any() and (~keep & mask.bool()).any():
        assert entropy[keep].min() >= entropy[~keep & mask.bool()].max()


def _fork_top_mask(entropy: torch.Tensor, mask: torch.Tensor, ratio: float) -> torch.Tensor:
    """What the 80/20 fork's ``get_global_entropy_top_mask`` intends, written out: over every valid
    token of the micro-batch, k = int(N * ratio + 0.9999) highest entropies, as a boolean mask."""
    valid = mask.bool().flatten()
    k = int(int(valid.sum()) * ratio + 0.9999)
    order = sorted(range(valid.numel()), key=lambda i: -float(entropy.flatten()[i]))
    chosen = [i for i in order if valid[i]][:k]
    keep = torch.zeros(valid.numel(), dtype=torch.bool)
    keep[chosen] = True
    return keep.view_as(mask)


def test_the_mask_pools_every_response_of_a_gathered_micro_batch():
    """DAPO/DAPO-FT's micro-batch gathers many responses (ring attention over 8 GPUs, like the fork's
    sequence parallelism): the top 20% is taken over all of their tokens, not per response."""
    confident, uncertain = torch.full((3, 10), 0.5), torch.full((1, 10), 4.0)
    entropy = torch.cat([confident, uncertain]) + torch.linspace(0, 0.1, 10)
    mask = torch.ones(4, 10)
    mask[0, 7:] = 0  # a shorter response
    keep = high_entropy_mask(entropy, mask, 0.2)  # 37 valid tokens -> k = ceil(7.4) = 8
    assert int(keep.sum()) == 8 and keep[3].sum() == 8 and not keep[:3].any()
    per_response = [int(high_entropy_mask(entropy[i : i + 1], mask[i : i + 1], 0.2).sum()) for i in range(4)]
    assert per_response == [2, 2, 2, 2]  # a per-response top-20% would be another method


@settings(max_examples=60, deadline=None)
@given(responses=st.integers(1, 16), width=st.integers(1, 48), seed=st.integers(0, 9999))
def test_the_mask_is_the_forks_over_a_micro_batch(responses, width, seed):
    g = torch.Generator().manual_seed(seed)
    entropy = torch.rand(responses, width, generator=g)  # distinct values: no ties to break
    lengths = torch.randint(0, width + 1, (responses,), generator=g)
    mask = (torch.arange(width)[None, :] < lengths[:, None]).float()
    assert torch.equal(high_entropy_mask(entropy, mask, 0.2), _fork_top_mask(entropy, mask, 0.2))
