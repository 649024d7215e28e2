"""The actor's policy loss: OpenRLHF's ``PolicyLoss`` with a clip rule's per-token bounds (InfoPPO's
``adaptive`` clip) and/or a token mask chosen by entropy (DAPO-FT's ``top_entropy``), and
the clip diagnostics every method logs. One wrapper of the loss and one of ``training_step`` (which
hands the wrapper each micro-batch); upstream's method bodies run unchanged."""

from __future__ import annotations

from typing import Any

import torch

from infoppo_cli.infotime import clip_statistics
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO
from infoppo_cli.openrlhf_adapter.settings import InfoSettings

CLIP_KEYS = ("clip_frac_upper", "clip_frac_lower", "clip_upper_mean", "clip_lower_mean")
"""The clip diagnostics in ``experience.info`` (every method, so the figures compare them)."""


class InfoPolicyLoss(torch.nn.Module):
    """Wraps an OpenRLHF ``PolicyLoss``; ``experience`` is the micro-batch being trained on.

    InfoPPO: ``PolicyLoss`` clamps the ratio to ``[1 - eps_low, 1 + eps_high]`` and accepts tensors,
    so per-token ``eps_low = 1 - lower(rho)`` and ``eps_high = upper(rho) - 1`` give exactly the
    adaptive bounds, while dual-clip, IS correction and loss aggregation stay upstream's.
    DAPO-FT: the loss mask keeps the ``top_entropy_frac`` highest-entropy tokens of the micro-batch,
    by the *current* policy's entropy from the training forward (``current_entropy``, captured by
    :func:`install_info_loss`), as the 80/20 authors' verl fork does: ``get_global_entropy_top_mask``
    called inside ``dp_actor.update_policy``'s micro-batch loop, on ``entropy`` from the same
    forward as the log-probs, detached; top-k with k rounded up; token-mean over the kept tokens.
    """

    def __init__(self, inner: torch.nn.Module, settings: InfoSettings) -> None:
        super().__init__()
        self.inner = inner
        self.settings = settings
        self.experience: Any = None
        self.current_entropy: torch.Tensor | None = None

    @property
    def fixed_eps(self) -> tuple[float, float]:
        """OpenRLHF's constant ``(eps_low, eps_high)`` (the inner ``PolicyLoss``'s): the bounds the clip
        diagnostics of a fixed-clip method are measured against."""
        return float(self.inner.clip_eps_low), float(self.inner.clip_eps_high)

    def forward(self, log_probs, old_log_probs, advantages, action_mask=None, **kwargs):  # noqa: D102
        if self.experience is None:
            raise RuntimeError("InfoPolicyLoss needs the current experience (set by training_step)")
        for key in CLIP_KEYS:
            self.experience.info.pop(
                key, None
            )  # stale values of an earlier epoch must not pass for this one's
        if self.settings.loss_tokens.by_entropy:
            action_mask, kwargs = self._high_entropy_only(log_probs, action_mask, kwargs)
        if self.settings.clip_rule.uses_rho:
            return self._per_token_clip(log_probs, old_log_probs, advantages, action_mask, **kwargs)
        result = self.inner(log_probs, old_log_probs, advantages, action_mask=action_mask, **kwargs)
        if action_mask is not None:
            ratio = (log_probs.detach().float() - old_log_probs.float()).clamp(-20.0, 20.0).exp()
            eps_low, eps_high = self.fixed_eps
            lower, upper = torch.full_like(ratio, 1.0 - eps_low), torch.full_like(ratio, 1.0 + eps_high)
            self.experience.info.update(clip_statistics(ratio, advantages, lower, upper, action_mask))
        return result

    def _per_token_clip(self, log_probs, old_log_probs, advantages, action_mask, **kwargs):
        rho = getattr(self.experience, INFO_RHO).to(log_probs.device)
        lower, upper = self.settings.clip_rule.bounds_for(rho, self.settings)
        saved = self.inner.clip_eps_low, self.inner.clip_eps_high
        self.inner.clip_eps_low, self.inner.clip_eps_high = 1.0 - lower, upper - 1.0
        try:
            result = self.inner(log_probs, old_log_probs, advantages, action_mask=action_mask, **kwargs)
        finally:
            self.inner.clip_eps_low, self.inner.clip_eps_high = saved
        ratio = (log_probs.detach() - old_log_probs).clamp(-20.0, 20.0).exp()
        self.experience.info.update(clip_statistics(ratio, advantages, lower, upper, action_mask))
        return result

    def _high_entropy_only(self, log_probs, action_mask, kwargs):
        """The loss mask restricted to the top-entropy tokens, and the token count it is divided by."""
        if self.current_entropy is None:
            raise RuntimeError(
                "the top-entropy mask needs the training forward's entropy (actor.entropy_coef 0)"
            )
        entropy = self.current_entropy[:, -action_mask.shape[1] :].detach().to(log_probs.device)
        keep = self.settings.loss_tokens.keep_for(entropy, action_mask, self.settings)
        share = keep.sum() / action_mask.bool().sum().clamp(min=1)
        # token-mean over the kept tokens: OpenRLHF divides the masked sum by the step window's token
        # count (its global token-mean); scaling that count by this micro-batch's kept share makes the
        # micro-batch's loss the mean over its kept tokens, weighted by its tokens as OpenRLHF weighs them
        if kwargs.get("batch_num_tokens") is not None:
            kwargs = {**kwargs, "batch_num_tokens": kwargs["batch_num_tokens"] * float(share)}
        self.experience.info["high_entropy_token_frac"] = share.detach()
        return action_mask.bool() & keep, kwargs


def _capture_training_entropy(actor: torch.nn.Module, loss: InfoPolicyLoss) -> None:
    """Hand the loss the entropy of the training forward that feeds it (OpenRLHF's ``Actor``
    returns ``(log_probs, output)`` with ``output.entropy`` when ``actor.entropy_coef`` is set)."""

    def keep_entropy(module, args, result):
        if loss.experience is not None and isinstance(result, tuple) and len(result) == 2:
            loss.current_entropy = getattr(result[1], "entropy", None)

    actor.register_forward_hook(keep_entropy)


def install_info_loss(trainer: Any, settings: InfoSettings) -> InfoPolicyLoss:
    """Swap ``trainer.actor_loss_fn`` for :class:`InfoPolicyLoss` and let ``training_step`` hand it
    each micro-batch (an instance-level wrapper; upstream's method body runs unchanged)."""
    loss = InfoPolicyLoss(trainer.actor_loss_fn, settings)  # OpenRLHF's PolicyLoss inside
    trainer.actor_loss_fn = loss
    upstream_step = trainer.training_step
    if settings.loss_tokens.by_entropy:
        _capture_training_entropy(trainer.actor, loss)

    def training_step(experience, *args, **kwargs):
        loss.experience = experience
        try:
            return upstream_step(experience, *args, **kwargs)
        finally:
            loss.experience, loss.current_entropy = None, None

    trainer.training_step = training_step
    return loss
