"""Every RL step trains a full rollout batch of samples drawn from the current policy, as verl does.

OpenRLHF 0.11.2's ``SamplesGenerator.generate_samples`` returns whatever is left at the end of a pass
over the prompts (fewer than ``rollout.batch_size`` groups, more often under DAPO's dynamic sampling),
and its trainer trains that short batch as an RL step of its own. verl's DAPO trainer instead keeps
the groups it has gathered and goes on drawing prompts, across the dataloader's epochs, until the
batch is full; it then cuts the batch to ``train_batch_size`` groups and drops the rest, and starts
the next step's batch empty (``recipe/dapo/dapo_ray_trainer.py``). :class:`FullBatches` does the same
to one sample generator: a short batch is held and completed by the first draw of the next pass (no
update has happened in between, so it is still on-policy); a longer pool is cut to one batch and the
surplus dropped, since the batch handed out is trained before the next draw and the surplus would be
one policy update stale by then. Groups stay whole, since a batch is a multiple of
``n_samples_per_prompt`` responses.

``keep_stale_surplus`` (a method's explicit choice, ``InfoSettings``) keeps the surplus for the next
step instead, uncorrected; each step then logs how many stale groups it trained. Upstream's own
``_sample_buffer`` holds nothing across steps in a synchronous run (OpenRLHF refuses
``rollout.vllm_generate_batch_size`` > ``rollout.batch_size`` without its async mode).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DISCARDED_STALE_GROUPS = "discarded_stale_groups"
"""Groups generated for a step beyond its batch and dropped, in ``metrics.jsonl`` each step."""
STALE_GROUPS_TRAINED = "stale_groups_trained"
"""Groups a step trained that were drawn before the last policy update (only with ``keep_stale_surplus``)."""


class FullBatches:
    """A sample generator's draw (``draw``: a ``generate_samples``) that hands out full batches only; a
    layer of the ``generate_samples`` that the trainer composes (``actors.py``).

    ``policy_version`` counts the batches handed out: the trainer trains each before it draws again,
    so it is the number of policy updates made since the run (or its resume) began.
    """

    def __init__(
        self,
        draw: Callable[..., tuple],
        batch_responses: int,
        samples_per_prompt: int,
        keep_stale_surplus: bool = False,
    ) -> None:
        self.batch_responses = int(batch_responses)
        self.samples_per_prompt = max(int(samples_per_prompt), 1)
        self.keep_stale_surplus = bool(keep_stale_surplus)
        self.policy_version = 0
        self.held: list[tuple[int, Any]] = []
        """Samples drawn but not yet trained, each with the policy version that drew it."""
        self._counts = {DISCARDED_STALE_GROUPS: 0, STALE_GROUPS_TRAINED: 0}
        self._upstream = draw

    def __call__(self, **kwargs: Any):
        samples, pass_rate, consumed, exhausted = self._upstream(**kwargs)
        pool = [*self.held, *((self.policy_version, sample) for sample in samples or [])]
        if len(pool) < self.batch_responses:
            # upstream's loop draws again, or (exhausted) starts its next pass, which completes this batch
            self.held = pool
            return [], pass_rate, consumed, exhausted
        batch, surplus = pool[: self.batch_responses], pool[self.batch_responses :]
        stale = sum(1 for version, _ in batch if version != self.policy_version)
        self._counts[STALE_GROUPS_TRAINED] += stale // self.samples_per_prompt
        if self.keep_stale_surplus:
            self.held = surplus
        else:
            self.held = []
            self._counts[DISCARDED_STALE_GROUPS] += len(surplus) // self.samples_per_prompt
        self.policy_version += 1
        return [sample for _, sample in batch], pass_rate, consumed, exhausted

    def take(self) -> dict[str, float]:
        """The counts since the last take, for the step's ``metrics.jsonl`` line (0s included, so each
        line says what happened to the surplus)."""
        counts = {key: float(value) for key, value in self._counts.items()}
        if not self.keep_stale_surplus:
            counts.pop(STALE_GROUPS_TRAINED)  # always 0: the batch is drawn from the current policy
        self._counts = dict.fromkeys(self._counts, 0)
        return counts
