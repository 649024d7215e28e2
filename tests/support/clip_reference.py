"""InfoPPO's clipped objective written out on its own: the reference the tests hold OpenRLHF's
``PolicyLoss`` with per-token bounds (what the actor trains with, ``policy_loss.py``) against."""

from __future__ import annotations

import torch

from infoppo_cli.infotime import adaptive_clip_bounds, clip_statistics


def info_clip_policy_loss(
    log_probs: torch.Tensor,
    old_log_probs: torch.Tensor,
    advantages: torch.Tensor,
    rho: torch.Tensor,
    mask: torch.Tensor,
    eps_low: float,
    eps_high: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO surrogate with adaptive, per-token clipping (InfoPPO clipped objective).

    ``loss = -min(w * A, clip(w, lower, upper) * A)`` averaged over valid tokens, with
    ``w = exp(log_probs - old_log_probs)`` (log-ratio clamped to +-20 as OpenRLHF does).
    Gradients flow to ``log_probs`` only. ``stats`` are :func:`clip_statistics` as floats.
    """
    shapes = {tuple(t.shape) for t in (log_probs, old_log_probs, advantages, rho, mask)}
    assert len(shapes) == 1 and len(next(iter(shapes))) == 2, f"(batch, T) tensors of one shape: {shapes}"
    lower, upper = adaptive_clip_bounds(rho, eps_low, eps_high)
    adv = advantages.detach()
    ratio = (log_probs - old_log_probs.detach()).clamp(-20.0, 20.0).exp()
    clipped = torch.maximum(torch.minimum(ratio, upper), lower)
    per_token = -torch.minimum(ratio * adv, clipped * adv)
    valid = mask.bool()
    loss = (per_token * valid).sum() / valid.sum().clamp(min=1)
    return loss, {
        name: float(value) for name, value in clip_statistics(ratio, adv, lower, upper, mask).items()
    }
