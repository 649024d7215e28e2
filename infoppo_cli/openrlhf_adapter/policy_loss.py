"""The actor's policy loss: OpenRLHF's ``PolicyLoss`` with InfoPPO's per-token clip bounds, or
DAPO-FT's high-entropy token mask. ``training_step`` itself stays upstream's."""

from __future__ import annotations

from typing import Any

import torch

from infoppo_cli.infotime import adaptive_clip_bounds, clip_statistics, high_entropy_mask
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY
from infoppo_cli.openrlhf_adapter.settings import InfoSettings


class InfoPolicyLoss(torch.nn.Module):
    """Wraps an OpenRLHF ``PolicyLoss``; ``experience`` is the micro-batch being trained on.

    InfoPPO: ``PolicyLoss`` clamps the ratio to ``[1 - eps_low, 1 + eps_high]`` and accepts tensors,
    so per-token ``eps_low = 1 - lower(rho)`` and ``eps_high = upper(rho) - 1`` give exactly the
    adaptive bounds, while dual-clip, IS correction and loss aggregation stay upstream's.
    DAPO-FT: the loss mask keeps the ``top_entropy_frac`` highest old-policy-entropy tokens.
    """

    def __init__(self, inner: torch.nn.Module, settings: InfoSettings) -> None:
        super().__init__()
        self.inner = inner
        self.settings = settings
        self.experience: Any = None

    def forward(self, log_probs, old_log_probs, advantages, action_mask=None, **kwargs):  # noqa: D102
        if self.experience is None:
            raise RuntimeError("InfoPolicyLoss needs the current experience (set by training_step)")
        if self.settings.method == "infoppo":
            return self._adaptive_clip(log_probs, old_log_probs, advantages, action_mask, **kwargs)
        return self._high_entropy_only(log_probs, old_log_probs, advantages, action_mask, **kwargs)

    def _adaptive_clip(self, log_probs, old_log_probs, advantages, action_mask, **kwargs):
        rho = getattr(self.experience, INFO_RHO).to(log_probs.device)
        lower, upper = adaptive_clip_bounds(rho, self.settings.eps_low_info, self.settings.eps_high_info)
        saved = self.inner.clip_eps_low, self.inner.clip_eps_high
        self.inner.clip_eps_low, self.inner.clip_eps_high = 1.0 - lower, upper - 1.0
        try:
            result = self.inner(log_probs, old_log_probs, advantages, action_mask=action_mask, **kwargs)
        finally:
            self.inner.clip_eps_low, self.inner.clip_eps_high = saved
        ratio = (log_probs.detach() - old_log_probs).clamp(-20.0, 20.0).exp()
        self.experience.info.update(clip_statistics(ratio, advantages, lower, upper, action_mask))
        return result

    def _high_entropy_only(self, log_probs, old_log_probs, advantages, action_mask, **kwargs):
        entropy = getattr(self.experience, OLD_ENTROPY).to(log_probs.device)
        keep = high_entropy_mask(entropy, action_mask, self.settings.top_entropy_frac)
        share = keep.sum() / action_mask.bool().sum().clamp(min=1)
        # token-mean over the kept tokens: OpenRLHF divides by the window's token count
        if kwargs.get("batch_num_tokens") is not None:
            kwargs["batch_num_tokens"] = kwargs["batch_num_tokens"] * float(share)
        self.experience.info["high_entropy_token_frac"] = share.detach()
        return self.inner(
            log_probs, old_log_probs, advantages, action_mask=action_mask.bool() & keep, **kwargs
        )


def install_info_loss(trainer: Any, settings: InfoSettings) -> InfoPolicyLoss:
    """Swap ``trainer.actor_loss_fn`` for :class:`InfoPolicyLoss` and let ``training_step`` hand it
    each micro-batch (an instance-level wrapper; upstream's method body runs unchanged)."""
    loss = InfoPolicyLoss(trainer.actor_loss_fn, settings)
    trainer.actor_loss_fn = loss
    upstream_step = trainer.training_step

    def training_step(experience, *args, **kwargs):
        loss.experience = experience
        try:
            return upstream_step(experience, *args, **kwargs)
        finally:
            loss.experience = None

    trainer.training_step = training_step
    return loss
