"""rho by the name of its normalisation, for tests that compare the adapter's rho with the registry's."""

from __future__ import annotations

from torch import Tensor

from infoppo_cli.components import rho_normalisation


def information_density(
    entropy: Tensor, mask: Tensor, norm: str, vocab_size: int | None = None, max_entropy: float | None = None
) -> Tensor:
    """rho of ``entropy`` under the normalisation called ``norm`` (:meth:`RhoNormalisation.density`)."""
    return rho_normalisation(norm).density(entropy, mask, vocab_size=vocab_size, max_entropy=max_entropy)
