"""The diagnostics every method logs, so InfoPPO's figures can compare methods on the same axes.

OpenRLHF logs the rollout after DAPO's dynamic filtering has dropped the all-correct and all-wrong
groups, logs no entropy for its own methods, and no clip fractions. Here, for every method:

* :class:`RolloutRecorder` (trainer process) sees every graded response of a training generation
  *before* filtering: ``reward_mean``, ``grade_timeout_frac`` and ``kept_group_frac``;
* :func:`add_entropy_diagnostics` (trainer process) gives ``entropy_mean`` (old policy) and
  ``rho_mean`` per sample, whether or not the method uses rho;
* the actor's loss (``policy_loss.InfoPolicyLoss``, in the workers) gives ``clip_frac_upper/lower`` and
  the bound means, constant or adaptive.

Per-sample values go into ``experience.info`` as tensors: OpenRLHF's ``training_step`` keeps only
tensor (and list) values of ``info`` and silently drops anything else, a Python float included.
"""

from __future__ import annotations

from typing import Any

import torch

from infoppo_cli.components import NORMS, RhoNormalisation, rho_normalisation
from infoppo_cli.infotime import masked_max_entropy
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY

UNFILTERED_REWARD = "rollout/reward_mean_unfiltered"
RESPONSES_GENERATED = "responses_generated"
"""Responses generated for the step, dropped groups (DAPO's dynamic sampling) included: the compute
axis of ``infoppo report --x responses``."""
KEPT_GROUP_FRAC = "rollout/kept_group_frac"
GRADE_TIMEOUT_FRAC = "rollout/grade_timeout_frac"


def _row_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.float()
    return (values.float() * mask).sum(-1) / mask.sum(-1).clamp(min=1)


class RolloutRecorder:
    """Wraps one ``SamplesGenerator`` (instance attributes only) to see responses before filtering."""

    def __init__(self, generator: Any, samples_per_prompt: int) -> None:
        self.samples_per_prompt = max(int(samples_per_prompt), 1)
        self._recording = False
        self._responses: list[tuple[float, float]] = []
        self._pending: dict[str, float] = {}
        upstream_generate = generator.generate_samples
        upstream_process = generator._process_response_into_experience
        upstream_batch = generator._generate_vllm

        def generate_samples(**kwargs):
            self._recording, self._responses = True, []
            try:
                return upstream_generate(**kwargs)
            finally:
                self._recording = False

        def process(response, **kwargs):
            if self._recording:
                timeout = (response.get("extra_logs") or {}).get("grade_timeout", 0.0)
                self._responses.append((float(response.get("reward") or 0.0), float(timeout)))
            return upstream_process(response, **kwargs)

        def generate_batch(*args, **kwargs):
            experiences, consumed, exhausted = upstream_batch(*args, **kwargs)
            if self._recording and consumed:
                self._summarise(len(experiences) / self.samples_per_prompt, consumed)
            return experiences, consumed, exhausted

        generator.generate_samples = generate_samples
        generator._process_response_into_experience = process
        generator._generate_vllm = generate_batch

    def _summarise(self, kept_groups: float, prompts: int) -> None:
        if not self._responses:
            return
        rewards, timeouts = zip(*self._responses, strict=True)
        # a generation that did not fill a batch (the end of a pass) counts towards the step it completes
        generated = self._pending.get(RESPONSES_GENERATED, 0.0) + len(rewards)
        self._pending = {
            UNFILTERED_REWARD: sum(rewards) / len(rewards),
            GRADE_TIMEOUT_FRAC: sum(timeouts) / len(timeouts),
            KEPT_GROUP_FRAC: kept_groups / prompts,
            RESPONSES_GENERATED: generated,
        }

    def take(self) -> dict[str, float]:
        """The statistics of the latest training generation, once (empty if there was none since)."""
        stats, self._pending = self._pending, {}
        return stats


def _diagnostic_norm(norm: str | None) -> RhoNormalisation:
    """The method's rho normalisation, or a batch-wide one where it has none or needs the vocabulary
    size (not at hand here)."""
    rule = rho_normalisation(norm) if norm is not None else None
    if rule is None or rule.needs_vocab:
        return next(entry for entry in NORMS.values() if entry.batch_wide)
    return rule


def add_entropy_diagnostics(experiences: list, norm: str | None) -> list:
    """``entropy_mean`` and ``rho_mean`` per sample for every method (rho normalised as ``norm``;
    ``global`` needs the vocabulary, so it is shown with ``batch`` normalisation).

    No actor loss reads the old entropy (DAPO-FT masks by the current policy's), so it is dropped here
    rather than shipped to the actor workers.
    """
    present = [e for e in experiences if getattr(e, OLD_ENTROPY, None) is not None]
    if not present:
        return experiences
    rule = _diagnostic_norm(norm)
    shared = max(masked_max_entropy(getattr(e, OLD_ENTROPY), e.action_mask) for e in present)
    for experience in present:
        entropy = getattr(experience, OLD_ENTROPY)
        experience.info.setdefault("entropy_mean", _row_mean(entropy, experience.action_mask))
        if "rho_mean" not in experience.info:
            rho = getattr(experience, INFO_RHO, None)
            if rho is None:
                rho = rule.density(entropy, experience.action_mask, max_entropy=shared)
            experience.info["rho_mean"] = _row_mean(rho, experience.action_mask)
        setattr(experience, OLD_ENTROPY, None)
    return experiences
