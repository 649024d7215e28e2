"""Per-token fields that carry the old policy's entropy and rho inside OpenRLHF's ``Experience``.

OpenRLHF batches, splits, un-pads and re-pads an ``Experience`` field by field, iterating
``dataclasses.fields(Experience)``; an attribute that is not a declared field is silently dropped
on the way to the actor. So the fields are declared on the class itself, in place (every module
holds a reference to that one class), in each process that builds or splits experiences.
"""

from __future__ import annotations

import dataclasses

import torch
from openrlhf.trainer.ppo_utils import experience as experience_module

OLD_ENTROPY = "old_entropy"
"""(B, A) entropy of the old policy's next-token distribution at each action, 0 off the mask."""
INFO_RHO = "info_rho"
"""(B, A) information density rho in [0, 1], 0 off the mask."""


def ensure_experience_fields() -> None:
    """Declare :data:`OLD_ENTROPY` and :data:`INFO_RHO` as "step" tensor fields (idempotent)."""
    cls = experience_module.Experience
    missing = [name for name in (OLD_ENTROPY, INFO_RHO) if name not in cls.__dataclass_fields__]
    if not missing:
        return
    # Re-running @dataclass needs the Field objects back as class attributes.
    for existing in dataclasses.fields(cls):
        setattr(cls, existing.name, existing)
    for name in missing:
        cls.__annotations__[name] = torch.Tensor
        setattr(cls, name, experience_module.tensor_field("step", default=None))
    for generated in ("__init__", "__repr__", "__eq__"):
        if generated in cls.__dict__:
            delattr(cls, generated)
    dataclasses.dataclass(cls)
