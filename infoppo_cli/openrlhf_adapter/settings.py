"""infoppo's own training settings, carried to every OpenRLHF process as ``args.infotime``."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields
from types import SimpleNamespace
from typing import Any

FLAG_PREFIX = "--infotime."


@dataclass(frozen=True)
class InfoSettings:
    """Settings the OpenRLHF flags cannot express.

    method: the method's name, a label for logs only: behaviour follows the components below.
    advantage, clip, token_mask: the method's components (``infoppo_cli/train/methods.py``):
      ``info_time_gae`` replaces OpenRLHF's GAE, ``adaptive`` clips with the paper's bounds,
      ``top_entropy`` keeps only the highest-entropy tokens in the policy loss (DAPO-FT).
      The defaults are InfoPPO's, the paper's method.
    eps_low_info, eps_high_info: adaptive-clip epsilons (paper: 10 and 20).
    norm: entropy normalisation for rho: ``batch`` (paper default), ``sentence`` or ``global``.
    top_entropy_frac: DAPO-FT's share of highest-entropy tokens that keep a gradient (0.2).
    entropy_chunk_size: positions per chunk when computing the old policy's entropy.
    metrics_path: where the trainer appends one JSON line per step.
    ray_address: an existing Ray cluster to join; ``None`` starts an embedded local Ray.
    """

    method: str = "infoppo"
    advantage: str = "info_time_gae"
    clip: str = "adaptive"
    token_mask: str = "all"
    eps_low_info: float = 10.0
    eps_high_info: float = 20.0
    norm: str = "batch"
    top_entropy_frac: float = 0.2
    entropy_chunk_size: int = 256
    metrics_path: str | None = None
    ray_address: str | None = None

    @property
    def uses_rho(self) -> bool:
        """Information-time GAE and the adaptive clip both need rho, from the old policy's entropy."""
        return self.advantage == "info_time_gae" or self.clip == "adaptive"

    @property
    def needs_old_entropy(self) -> bool:
        """Whether infoppo's actor worker (old-policy entropy, infoppo's policy loss) and experience
        maker replace upstream's: for rho, or for the top-entropy token mask's loss."""
        return self.uses_rho or self.token_mask == "top_entropy"

    def as_namespace(self) -> SimpleNamespace:
        """The form attached to OpenRLHF's argument tree (picklable, like the rest of it)."""
        return SimpleNamespace(**asdict(self))

    @classmethod
    def from_args(cls, args: Any) -> InfoSettings:
        """Read the settings back from OpenRLHF's argument tree (defaults when absent)."""
        node = getattr(args, "infotime", None)
        return cls(**vars(node)) if node is not None else cls()


def split_argv(argv: list[str]) -> tuple[InfoSettings, list[str]]:
    """Separate ``--infotime.*`` flags (returned as settings) from OpenRLHF's flags."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for f in fields(InfoSettings):
        kind = {"float": float, "int": int}.get(str(f.type).split(" ")[0], str)
        parser.add_argument(f"{FLAG_PREFIX}{f.name}", dest=f.name, type=kind, default=f.default)
    known, rest = parser.parse_known_args(argv)
    return InfoSettings(**vars(known)), rest
