"""OpenRLHF's experience maker with the old policy's entropy, rho, and information-time GAE."""

from __future__ import annotations

from typing import Any

import torch
from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker

from infoppo_cli.components import rho_normalisation
from infoppo_cli.infotime import info_discount, masked_max_entropy, token_discount
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY
from infoppo_cli.openrlhf_adapter.settings import InfoSettings
from infoppo_cli.openrlhf_adapter.step_metrics import add_entropy_diagnostics


def _row_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.float()
    return (values.float() * mask).sum(-1) / mask.sum(-1).clamp(min=1)


class InfoExperienceMaker(RemoteExperienceMaker):
    """Adds, on top of upstream's experience making (runs in the PPOTrainer process):

    * the actor workers return ``(log_probs, entropy)``; the entropy is kept as ``old_entropy``;
    * when a component uses rho, it is normalised as ``settings.norm`` names (``components.NORMS``;
      a batch-wide norm over the whole rollout); with an information-time advantage estimator
      (``info_time_gae``) upstream's ``compute_advantages_and_returns`` (reward shaping, KL,
      whitening) runs with the estimator's ``gae_with_rho`` in place of its GAE loop; with a per-token
      clip rule (``adaptive``) rho travels to the actor as ``info_rho``;
    * per-sample diagnostics in ``info``: ``entropy_mean``, ``rho_mean``, ``info_discount_mean``, for
      every method (``step_metrics.add_entropy_diagnostics``).
    """

    def __init__(self, *args: Any, settings: InfoSettings, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings = settings
        self._pending_entropy: list[torch.Tensor] = []
        self._rho_by_values: dict[int, torch.Tensor] = {}

    @classmethod
    def replacing(cls, upstream: RemoteExperienceMaker, settings: InfoSettings) -> InfoExperienceMaker:
        """A maker built from the same model groups, controller and tokenizer as ``upstream``."""
        return cls(
            upstream.actor_model_group,
            upstream.critic_model_group,
            upstream.reward_model_group,
            upstream.initial_model_group,
            upstream.kl_ctl,
            upstream.strategy,
            upstream.tokenizer,
            settings=settings,
        )

    def make_experience_batch(self, rollout_samples):
        """Upstream's experiences, with ``entropy_mean`` and ``rho_mean`` for every method (the old
        entropy is dropped after: no actor loss reads it)."""
        return add_entropy_diagnostics(super().make_experience_batch(rollout_samples), self.settings.norm)

    def _flatten_results(self, refs, duplicate_factor):
        results = super()._flatten_results(refs, duplicate_factor)
        if results and isinstance(results[0], tuple):  # only the actor answers with (log_probs, entropy)
            self._pending_entropy = [entropy for _, entropy in results]
            results = [log_probs for log_probs, _ in results]
        return results

    @torch.no_grad()
    def make_experience(self, samples_list):
        experiences = super().make_experience(samples_list)
        entropies, self._pending_entropy = self._pending_entropy, []
        if len(entropies) != len(experiences):
            raise RuntimeError(
                "the actor workers did not return the old policy's entropy (infoppo actor missing?)"
            )
        for experience, entropy in zip(experiences, entropies, strict=True):
            setattr(experience, OLD_ENTROPY, entropy)
            experience.info["entropy_mean"] = _row_mean(entropy, experience.action_mask)
        return experiences

    @torch.no_grad()
    def compute_advantages_and_returns(self, experiences):
        gamma = self.args.algo.advantage.gamma
        for experience in experiences:  # both clocks are recorded for every method
            experience.info["token_discount_mean"] = token_discount(experience.action_mask, gamma)
        if not self.settings.uses_rho:
            return super().compute_advantages_and_returns(experiences)
        rhos = self._densities(experiences)
        if self.settings.advantage_estimator.uses_rho:
            self._rho_by_values = {id(exp.values): rho for exp, rho in zip(experiences, rhos, strict=True)}
        try:
            experiences = super().compute_advantages_and_returns(experiences)
        finally:
            self._rho_by_values = {}
        for experience, rho in zip(experiences, rhos, strict=True):
            if self.settings.clip_rule.uses_rho:  # the actor's clip bounds need rho
                setattr(experience, INFO_RHO, rho)
            setattr(experience, OLD_ENTROPY, None)  # the actor needs rho only
            experience.info["rho_mean"] = _row_mean(rho, experience.action_mask)
            experience.info["info_discount_mean"] = info_discount(rho, experience.action_mask, gamma)
        return experiences

    @torch.no_grad()
    def get_advantages_and_returns(self, values, rewards, action_mask, gamma, lambd):
        if not self._rho_by_values:
            return super().get_advantages_and_returns(values, rewards, action_mask, gamma, lambd)
        rho = self._rho_by_values.get(id(values))
        if rho is None:  # never fall back to token-time GAE in an information-time run
            raise RuntimeError(
                "information-time GAE found no rho for these values: OpenRLHF's "
                "compute_advantages_and_returns no longer passes experience.values to "
                "get_advantages_and_returns (openrlhf/trainer/ppo_utils/experience_maker.py changed)"
            )
        return self.settings.advantage_estimator.gae_with_rho(rewards, values, rho, action_mask, gamma, lambd)

    def _densities(self, experiences) -> list[torch.Tensor]:
        """rho for each experience; ``batch`` normalises by the maximum over the whole rollout."""
        norm = rho_normalisation(self.settings.norm)
        shared_max = None
        if norm.batch_wide:
            shared_max = max(masked_max_entropy(getattr(e, OLD_ENTROPY), e.action_mask) for e in experiences)
        vocab = self._vocab_size() if norm.needs_vocab else None
        return [
            norm.density(getattr(e, OLD_ENTROPY), e.action_mask, vocab_size=vocab, max_entropy=shared_max)
            for e in experiences
        ]

    def _vocab_size(self) -> int:
        """The logits dimension (the model config's vocab_size, not ``len(tokenizer)``)."""
        if not hasattr(self, "_vocab"):
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(self.args.actor.model_name_or_path, trust_remote_code=True)
            self._vocab = int(getattr(config, "vocab_size", None) or config.get_text_config().vocab_size)
        return self._vocab
