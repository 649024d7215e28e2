"""rho by the name of its normalisation, for tests that compare the adapter's rho with the registry's."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import Tensor

from infoppo_cli.components import RhoInputs, rho_normalisation


def information_density(
    entropy: Tensor, mask: Tensor, norm: str, vocab_size: int | None = None, max_entropy: float | None = None
) -> Tensor:
    """rho of ``entropy`` under the normalisation called ``norm``, as one tensor of a rollout batch of
    a model with ``vocab_size`` tokens whose largest entropy is ``max_entropy`` (default: its own; it
    must be at least that)."""
    entropies, masks = [entropy], [mask]
    if max_entropy is not None:
        entropies.append(torch.tensor([[float(max_entropy)]]))
        masks.append(torch.ones(1, 1))
    batch = RhoInputs(entropies, masks, lambda: SimpleNamespace(vocab_size=vocab_size))
    return rho_normalisation(norm).density(entropy, mask, batch)
