"""Every RL step trains a full rollout batch, as verl does.

OpenRLHF 0.11.2's ``SamplesGenerator.generate_samples`` returns whatever is left at the end of a pass
over the prompts (fewer than ``rollout.batch_size`` groups, more often under DAPO's dynamic sampling),
and its trainer trains that short batch as an RL step of its own. verl's DAPO trainer instead keeps
the groups it has gathered and goes on drawing prompts, across the dataloader's epochs, until the
batch is full (``recipe/dapo/dapo_ray_trainer.py``: the accumulated ``batch`` is only reset after a
training step). :class:`FullBatches` does the same to one sample generator: a short batch is held and
completed by the first draw of the next pass; a longer one is cut to one batch, the rest held. Groups
stay whole, since a batch is a multiple of ``n_samples_per_prompt`` responses.
"""

from __future__ import annotations

from typing import Any


class FullBatches:
    """Wraps ``generator.generate_samples`` (an instance attribute) to hand out full batches only."""

    def __init__(self, generator: Any, batch_responses: int) -> None:
        self.batch_responses = int(batch_responses)
        self.held: list = []
        self._upstream = generator.generate_samples
        generator.generate_samples = self

    def __call__(self, **kwargs: Any):
        samples, pass_rate, consumed, exhausted = self._upstream(**kwargs)
        pool = [*self.held, *(samples or [])]
        if len(pool) < self.batch_responses:
            # upstream's loop draws again, or (exhausted) starts its next pass, which completes this batch
            self.held = pool
            return [], pass_rate, consumed, exhausted
        self.held = pool[self.batch_responses :]
        return pool[: self.batch_responses], pass_rate, consumed, exhausted
