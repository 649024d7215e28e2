"""The diagnostics every method logs, so the paper's figures can compare methods on the same axes.

OpenRLHF logs the rollout after DAPO's dynamic filtering has dropped the all-correct and all-wrong
groups, logs no entropy for its own methods, and no clip fractions. Here, for every method:

* :class:`RolloutRecorder` (trainer process) sees every graded response of a training generation
  *before* filtering: ``reward_mean``, ``grade_timeout_frac`` and ``kept_group_frac``;
* :func:`add_entropy_diagnostics` (trainer process) gives ``entropy_mean`` (old policy) and
  ``rho_mean`` per sample, whether or not the method uses rho;
* :func:`install_clip_logging` (actor workers) gives ``clip_frac_upper/lower`` and the bound means
  for fixed-bound methods (InfoPPO's loss logs its adaptive ones itself).

Per-sample values go into ``experience.info`` as tensors: OpenRLHF's ``training_step`` keeps only
tensor (and list) values of ``info`` and silently drops anything else, a Python float included.
"""

from __future__ import annotations

from typing import Any

import torch

from infoppo_cli.infotime import clip_statistics, information_density, masked_max_entropy
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY

UNFILTERED_REWARD = "rollout/reward_mean_unfiltered"
KEPT_GROUP_FRAC = "rollout/kept_group_frac"
GRADE_TIMEOUT_FRAC = "rollout/grade_timeout_frac"
CLIP_KEYS = ("clip_frac_upper", "clip_frac_lower", "clip_upper_mean", "clip_lower_mean")


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
        self._pending = {
            UNFILTERED_REWARD: sum(rewards) / len(rewards),
            GRADE_TIMEOUT_FRAC: sum(timeouts) / len(timeouts),
            KEPT_GROUP_FRAC: kept_groups / prompts,
        }

    def take(self) -> dict[str, float]:
        """The statistics of the latest training generation, once (empty if there was none since)."""
        stats, self._pending = self._pending, {}
        return stats


def add_entropy_diagnostics(experiences: list, norm: str) -> list:
    """``entropy_mean`` and ``rho_mean`` per sample for every method (rho normalised as ``norm``;
    ``global`` needs the vocabulary, so it is shown with ``batch`` normalisation).

    No actor loss reads the old entropy (DAPO-FT masks by the current policy's), so it is dropped here
    rather than shipped to the actor workers.
    """
    present = [e for e in experiences if getattr(e, OLD_ENTROPY, None) is not None]
    if not present:
        return experiences
    mode = norm if norm in ("batch", "sentence") else "batch"
    shared = max(masked_max_entropy(getattr(e, OLD_ENTROPY), e.action_mask) for e in present)
    for experience in present:
        entropy = getattr(experience, OLD_ENTROPY)
        experience.info.setdefault("entropy_mean", _row_mean(entropy, experience.action_mask))
        if "rho_mean" not in experience.info:
            rho = getattr(experience, INFO_RHO, None)
            if rho is None:
                rho = information_density(entropy, experience.action_mask, mode, max_entropy=shared)
            experience.info["rho_mean"] = _row_mean(rho, experience.action_mask)
        setattr(experience, OLD_ENTROPY, None)
    return experiences


class ClipLoggingLoss(torch.nn.Module):
    """Wraps the actor's loss: clip fractions with the constant bounds ``(eps_low, eps_high)`` whenever
    the wrapped loss did not log its own; ``experience`` is the micro-batch being trained on."""

    def __init__(self, inner: torch.nn.Module, eps_low: float, eps_high: float) -> None:
        super().__init__()
        self.inner = inner
        self.eps_low, self.eps_high = float(eps_low), float(eps_high)
        self.experience: Any = None

    def forward(self, log_probs, old_log_probs, advantages, action_mask=None, **kwargs):  # noqa: D102
        info = self.experience.info
        for key in CLIP_KEYS:
            info.pop(key, None)  # stale values of an earlier epoch must not pass for this one's
        result = self.inner(log_probs, old_log_probs, advantages, action_mask=action_mask, **kwargs)
        if "clip_frac_upper" not in info and action_mask is not None:
            ratio = (log_probs.detach().float() - old_log_probs.float()).clamp(-20.0, 20.0).exp()
            lower = torch.full_like(ratio, 1.0 - self.eps_low)
            upper = torch.full_like(ratio, 1.0 + self.eps_high)
            info.update(clip_statistics(ratio, advantages, lower, upper, action_mask))
        return result


def install_clip_logging(trainer: Any) -> ClipLoggingLoss:
    """Wrap ``trainer.actor_loss_fn`` in :class:`ClipLoggingLoss` with OpenRLHF's constant bounds
    ``args.actor.eps_clip_low_high``, and let ``training_step`` hand it each micro-batch
    (instance-level wrappers; upstream's method bodies run unchanged)."""
    actor = trainer.args.actor
    eps_low, eps_high = actor.eps_clip_low_high or (actor.eps_clip, actor.eps_clip)
    loss = ClipLoggingLoss(trainer.actor_loss_fn, eps_low, eps_high)
    upstream_step = trainer.training_step

    def training_step(experience, *args, **kwargs):
        loss.experience = experience
        try:
            return upstream_step(experience, *args, **kwargs)
        finally:
            loss.experience = None

    trainer.actor_loss_fn = loss
    trainer.training_step = training_step
    return loss
