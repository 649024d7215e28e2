"""InfoExperienceMaker on real OpenRLHF experiences: rho and advantages equal the core functions."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from densities import information_density
from openrlhf_fixtures import method_settings, openrlhf_args, rollout_experiences

from infoppo_cli.infotime import info_discount, info_time_gae, token_discount
from infoppo_cli.openrlhf_adapter.experience_fields import ensure_experience_fields
from infoppo_cli.openrlhf_adapter.settings import InfoSettings


def settings_of(name: str) -> InfoSettings:
    """The adapter's settings for a shipped method: its components, as the plan renders them."""
    return method_settings(name)


def make_maker(settings: InfoSettings | None, *flags: str):
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker
    from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController

    from infoppo_cli.openrlhf_adapter.experience_maker import InfoExperienceMaker

    args = openrlhf_args(*flags, settings=settings)
    strategy = SimpleNamespace(args=args)
    groups = (None, None, None, None, FixedKLController(0.0), strategy, None)
    if settings is None:
        return RemoteExperienceMaker(*groups)
    return InfoExperienceMaker(*groups, settings=settings)


def whiten(advantages: list[torch.Tensor], masks: list[torch.Tensor]) -> list[torch.Tensor]:
    flat = torch.cat([a.flatten() for a in advantages]).float()
    mask = torch.cat([m.flatten() for m in masks]).float()
    mean = (flat * mask).sum() / mask.sum()
    rstd = (((flat - mean) ** 2 * mask).sum() / mask.sum()).clamp(min=1e-8).rsqrt()
    return [(a - mean) * rstd for a in advantages]


@pytest.fixture(autouse=True)
def _fields():
    ensure_experience_fields()


@pytest.mark.parametrize("norm", ["batch", "sentence", "global"])
def test_rho_and_advantages_equal_the_core_functions(norm, monkeypatch):
    settings = method_settings("infoppo", norm=norm)
    flags = ("--algo.advantage.gamma", "0.999", "--algo.advantage.lambd", "0.99")
    maker = make_maker(settings, *flags)
    monkeypatch.setattr(maker, "_model_config", lambda: SimpleNamespace(vocab_size=151_936))
    experiences = rollout_experiences(n_experiences=3, batch=2, width=10, seed=1)
    entropies = [e.old_entropy.clone() for e in experiences]
    masks = [e.action_mask.clone() for e in experiences]
    values = [e.values.clone() for e in experiences]
    rewards = [e.rewards.clone() for e in experiences]

    out = maker.compute_advantages_and_returns(experiences)

    batch_max = max(float(h[m].max()) for h, m in zip(entropies, masks, strict=True))
    expected_rho = [
        information_density(
            h, m, norm, vocab_size=151_936, max_entropy=batch_max if norm == "batch" else None
        )
        for h, m in zip(entropies, masks, strict=True)
    ]
    raw = []
    for v, r, rho, m in zip(values, rewards, expected_rho, masks, strict=True):
        last = m.shape[1] - 1 - m.long().fliplr().argmax(dim=1)
        token_rewards = torch.zeros_like(v).scatter_(1, last[:, None], r[:, None])
        adv, ret = info_time_gae(token_rewards, v, rho, m, 0.999, 0.99)
        raw.append((adv, ret))
    expected_adv = whiten([a for a, _ in raw], masks)
    for exp, rho, (_, ret), adv in zip(out, expected_rho, raw, expected_adv, strict=True):
        assert torch.allclose(exp.info_rho, rho)
        assert torch.allclose(exp.returns, ret, atol=1e-6)
        assert torch.allclose(exp.advantages, adv, atol=1e-5)
        assert exp.old_entropy is None  # only rho travels to the actor
        assert torch.allclose(exp.info["info_discount_mean"], info_discount(rho, exp.action_mask, 0.999))
        assert torch.allclose(exp.info["token_discount_mean"], token_discount(exp.action_mask, 0.999))
        assert exp.info["rho_mean"].shape == (2,)
    if norm == "batch":
        assert max(float(e.info_rho.max()) for e in out) == pytest.approx(1.0)


def test_constant_entropy_reproduces_openrlhf_gae_exactly():
    flags = ("--algo.advantage.gamma", "0.97", "--algo.advantage.lambd", "0.9")
    ours = make_maker(method_settings("infoppo"), *flags)
    upstream = make_maker(None, *flags)
    a = rollout_experiences(n_experiences=2, batch=3, width=9, seed=2)
    b = rollout_experiences(n_experiences=2, batch=3, width=9, seed=2)
    for exp in a:
        exp.old_entropy = exp.action_mask.float() * 2.5  # rho == mask: information time == token time
    ours.compute_advantages_and_returns(a)
    upstream.compute_advantages_and_returns(b)
    for x, y in zip(a, b, strict=True):
        assert torch.allclose(x.advantages, y.advantages, atol=1e-5)
        assert torch.allclose(x.returns, y.returns * y.action_mask, atol=1e-5)


@pytest.mark.parametrize("method", ["ppo", "dapo-ft"])
def test_other_methods_leave_openrlhf_advantages_untouched(method):
    flags = ("--algo.advantage.gamma", "0.95", "--algo.advantage.lambd", "0.9")
    if method == "dapo-ft":
        flags = ("--algo.advantage.estimator", "group_norm", "--rollout.n_samples_per_prompt", "2")
    ours = make_maker(settings_of(method), *flags)
    upstream = make_maker(None, *flags)
    a = rollout_experiences(n_experiences=2, batch=2, width=8, seed=3)
    b = rollout_experiences(n_experiences=2, batch=2, width=8, seed=3)
    ours.compute_advantages_and_returns(a)
    upstream.compute_advantages_and_returns(b)
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.advantages, y.advantages) and torch.equal(x.returns, y.returns)
        assert x.info_rho is None and x.old_entropy is None  # DAPO-FT masks by the current entropy


def test_each_half_of_infoppo_alone(monkeypatch):
    """info-gae: information-time advantages, no rho for the actor; info-clip: token-time advantages
    (OpenRLHF's own), rho for the actor's adaptive clip."""
    flags = ("--algo.advantage.gamma", "0.999", "--algo.advantage.lambd", "0.99")
    runs = {}
    for name in ("infoppo", "info-gae", "info-clip", None):
        maker = make_maker(settings_of(name) if name else None, *flags)
        runs[name] = maker.compute_advantages_and_returns(
            rollout_experiences(n_experiences=2, batch=2, width=10, seed=4)
        )
    for full, gae, clip, upstream in zip(*runs.values(), strict=True):
        assert torch.allclose(gae.advantages, full.advantages) and gae.info_rho is None
        assert torch.equal(clip.advantages, upstream.advantages)
        assert torch.allclose(clip.info_rho, full.info_rho)
        assert not torch.allclose(full.advantages, upstream.advantages)
        assert gae.info["rho_mean"].shape == clip.info["rho_mean"].shape == (2,)


def _row_mean(values, mask):
    mask = mask.float()
    return (values * mask).sum(-1) / mask.sum(-1)


@pytest.mark.parametrize(
    ("method", "norm", "expected_norm"),
    [("ppo", None, "batch"), ("info-gae", "sentence", "sentence"), ("infoppo", "global", "global")],
)
def test_rho_is_made_once_per_batch_with_the_method_s_norm_for_every_method(
    method, norm, expected_norm, monkeypatch
):
    """Every method logs ``rho_mean`` with its own normalisation (``global``'s vocabulary included;
    a method without rho, with the batch-wide one); the actor's clip reads the same rho."""
    settings = method_settings(method) if norm is None else method_settings(method, norm=norm)
    maker = make_maker(settings, "--algo.advantage.gamma", "0.999", "--algo.advantage.lambd", "0.99")
    monkeypatch.setattr(maker, "_model_config", lambda: SimpleNamespace(vocab_size=1_000))
    made = []
    densities = maker._densities
    monkeypatch.setattr(maker, "_densities", lambda batch: made.append(batch) or densities(batch))
    experiences = rollout_experiences(n_experiences=3, batch=2, width=10, seed=5)
    entropies = [e.old_entropy.clone() for e in experiences]
    batch_max = max(float(e.old_entropy[e.action_mask].max()) for e in experiences)

    out = maker.compute_advantages_and_returns(experiences)

    assert len(made) == 1
    for exp, entropy in zip(out, entropies, strict=True):
        rho = information_density(
            entropy, exp.action_mask, expected_norm, vocab_size=1_000, max_entropy=batch_max
        )
        assert torch.allclose(exp.info["rho_mean"], _row_mean(rho, exp.action_mask))
        assert exp.old_entropy is None
        if settings.clip_rule.uses_rho:
            assert torch.allclose(exp.info_rho, rho)
        else:
            assert exp.info_rho is None  # nothing in the actor reads it
        assert ("info_discount_mean" in exp.info) == settings.uses_rho


def test_the_entropy_mean_is_the_old_policy_s(monkeypatch):
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker

    maker = make_maker(method_settings("ppo"))
    experiences = rollout_experiences(n_experiences=2, with_entropy=False)
    entropies = [torch.rand(e.action_mask.shape) for e in experiences]
    monkeypatch.setattr(RemoteExperienceMaker, "make_experience", lambda self, samples: samples)
    maker._pending_entropy = list(entropies)
    for exp, entropy in zip(maker.make_experience(experiences), entropies, strict=True):
        assert exp.old_entropy is entropy
        assert torch.allclose(exp.info["entropy_mean"], _row_mean(entropy, exp.action_mask))


def test_missing_entropy_from_the_actor_is_a_clear_error(monkeypatch):
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker

    maker = make_maker(method_settings("infoppo"))
    monkeypatch.setattr(RemoteExperienceMaker, "make_experience", lambda self, samples: samples)
    with pytest.raises(RuntimeError, match="entropy"):
        maker.make_experience(rollout_experiences(n_experiences=1, with_entropy=False))
