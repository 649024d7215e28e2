"""OpenRLHF's experience maker with the old policy's entropy, rho, and information-time GAE."""

from __future__ import annotations

from typing import Any

import torch
from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker
from transformers import AutoConfig

from infoppo_cli.components import UNNAMED_NORM, RhoInputs, rho_normalisation
from infoppo_cli.infotime import info_discount, token_discount
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY
from infoppo_cli.openrlhf_adapter.settings import InfoSettings


def _row_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.float()
    return (values.float() * mask).sum(-1) / mask.sum(-1).clamp(min=1)


class InfoExperienceMaker(RemoteExperienceMaker):
    """Adds, on top of upstream's experience making (runs in the PPOTrainer process):

    * the actor workers return ``(log_probs, entropy)``; the entropy is kept as ``old_entropy``;
    * rho, once per rollout batch for every method (:meth:`_densities`): normalised as the method's
      ``norm`` names (``components.NORMS``; a method without rho uses the batch-wide one), carried on
      each experience as ``info_rho``. The advantage, the actor's clip and the diagnostics all read
      that one value: with an information-time advantage estimator (``info_time_gae``) upstream's
      ``compute_advantages_and_returns`` (reward shaping, KL, whitening) runs with the estimator's
      ``gae_with_rho`` in place of its GAE loop; with a per-token clip rule (``adaptive``) it travels
      to the actor workers, and otherwise is dropped before they get the batch, as the old entropy is;
    * per-sample diagnostics in ``info`` for every method: ``entropy_mean``, ``rho_mean``,
      ``token_discount_mean``, and ``info_discount_mean`` for a method that uses rho.

    Per-sample values go into ``experience.info`` as tensors: OpenRLHF's ``training_step`` keeps only
    tensor (and list) values of ``info`` and silently drops anything else, a Python float included.
    """

    def __init__(self, *args: Any, settings: InfoSettings, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings = settings
        self._pending_entropy: list[torch.Tensor] = []
        self._advancing: list[Any] = []
        """The experiences whose advantages upstream is computing with rho (see
        :meth:`get_advantages_and_returns`)."""

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
        for experience, rho in zip(experiences, self._densities(experiences), strict=True):
            mask = experience.action_mask
            setattr(experience, INFO_RHO, rho)
            setattr(experience, OLD_ENTROPY, None)  # no actor loss reads it (DAPO-FT masks by the current)
            experience.info["rho_mean"] = _row_mean(rho, mask)
            experience.info["token_discount_mean"] = token_discount(mask, gamma)  # both clocks
            if self.settings.uses_rho:
                experience.info["info_discount_mean"] = info_discount(rho, mask, gamma)
        self._advancing = experiences if self.settings.advantage_estimator.uses_rho else []
        try:
            experiences = super().compute_advantages_and_returns(experiences)
        finally:
            self._advancing = []
        if not self.settings.clip_rule.uses_rho:  # only the actor's clip bounds read rho there
            for experience in experiences:
                setattr(experience, INFO_RHO, None)
        return experiences

    @torch.no_grad()
    def get_advantages_and_returns(self, values, rewards, action_mask, gamma, lambd):
        """Upstream's GAE, or the estimator's ``gae_with_rho`` with the rho of the experience whose
        ``values`` these are: upstream's ``compute_advantages_and_returns`` passes an experience's
        fields, not the experience, and its loop is not ours to replace."""
        if not self._advancing:
            return super().get_advantages_and_returns(values, rewards, action_mask, gamma, lambd)
        owner = next((e for e in self._advancing if e.values is values), None)
        if owner is None:  # never fall back to token-time GAE in an information-time run
            raise RuntimeError(
                "information-time GAE found no rho for these values: OpenRLHF's "
                "compute_advantages_and_returns no longer passes experience.values to "
                "get_advantages_and_returns (openrlhf/trainer/ppo_utils/experience_maker.py changed)"
            )
        rho = getattr(owner, INFO_RHO)
        return self.settings.advantage_estimator.gae_with_rho(rewards, values, rho, action_mask, gamma, lambd)

    def _densities(self, experiences) -> list[torch.Tensor]:
        """rho for each experience of the rollout batch, normalised as the method's ``norm`` names
        (a method without one: ``components.UNNAMED_NORM``)."""
        norm = rho_normalisation(self.settings.norm or UNNAMED_NORM)
        batch = RhoInputs(
            [getattr(e, OLD_ENTROPY) for e in experiences],
            [e.action_mask for e in experiences],
            self._model_config,
        )
        return norm.densities(batch)

    def _model_config(self) -> Any:
        """The actor's config, read once (for a normalisation that takes the model's values)."""
        if not hasattr(self, "_config"):
            self._config = AutoConfig.from_pretrained(
                self.args.actor.model_name_or_path, trust_remote_code=True
            )
        return self._config
