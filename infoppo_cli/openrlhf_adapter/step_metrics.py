"""The diagnostics every method logs, so InfoPPO's figures can compare methods on the same axes.

OpenRLHF logs the rollout after DAPO's dynamic filtering has dropped the all-correct and all-wrong
groups, logs no entropy for its own methods, and no clip fractions. Here, for every method:

* :class:`RolloutRecorder` (trainer process) sees every graded response of a training generation
  *before* filtering: ``reward_mean``, ``grade_timeout_frac`` and ``kept_group_frac``;
* the experience maker (``experience_maker.InfoExperienceMaker``, trainer process) gives
  ``entropy_mean`` (old policy) and ``rho_mean`` per sample, whether or not the method uses rho;
* the actor's loss (``policy_loss.InfoPolicyLoss``, in the workers) gives ``clip_frac_upper/lower`` and
  the bound means, constant or adaptive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

UNFILTERED_REWARD = "rollout/reward_mean_unfiltered"
RESPONSES_GENERATED = "responses_generated"
"""Responses generated for the step, dropped groups (DAPO's dynamic sampling) included: the compute
axis of ``infoppo report --x responses``."""
KEPT_GROUP_FRAC = "rollout/kept_group_frac"
GRADE_TIMEOUT_FRAC = "rollout/grade_timeout_frac"


class RolloutRecorder:
    """Wraps one ``SamplesGenerator`` (instance attributes only) to see responses before filtering:
    its per-response and per-batch methods here, and its draw with :meth:`draw`, a layer of the
    ``generate_samples`` that the trainer composes (``actors.py``)."""

    def __init__(self, generator: Any, samples_per_prompt: int) -> None:
        self.samples_per_prompt = max(int(samples_per_prompt), 1)
        self._recording = False
        self._responses: list[tuple[float, float]] = []
        self._pending: dict[str, float] = {}
        upstream_process = generator._process_response_into_experience
        upstream_batch = generator._generate_vllm

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

        generator._process_response_into_experience = process
        generator._generate_vllm = generate_batch

    def draw(self, upstream: Callable[..., tuple], **kwargs: Any) -> tuple:
        """One training generation (``upstream``: the generator's own ``generate_samples``), its
        responses recorded; evaluation's generations go by and are not."""
        self._recording, self._responses = True, []
        try:
            return upstream(**kwargs)
        finally:
            self._recording = False

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
