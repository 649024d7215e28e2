"""infoppo's own training settings, carried to every OpenRLHF process as ``args.infotime``."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, asdict, dataclass, fields
from types import SimpleNamespace
from typing import Any

FLAG_PREFIX = "--infotime."
REWARD_STYLE_ENV = "INFOPPO_REWARD_STYLE"
"""How the launcher tells the reward function (loaded by path in the rollout workers) its values."""


ADVANTAGES = ("gae", "info_time_gae", "group_norm")
CLIPS = ("fixed", "adaptive")
TOKEN_MASKS = ("all", "top_entropy")
REWARDS = {"binary": (1.0, 0.0), "signed": (1.0, -1.0)}
"""Reward for a correct and for any other response. ``signed`` is DAPO's: verl
``utils/reward_score/math_dapo.py::compute_score`` returns 1.0 if correct else -1.0."""
OPTIMIZERS = {"openrlhf": (0.9, 0.95), "verl": (0.9, 0.999)}
"""AdamW betas by toolkit: OpenRLHF 0.11.2's ``--{actor,critic}.adam.betas`` default, and verl's
``workers/config/optimizer.py::OptimizerConfig.betas``, which DAPO's official recipe runs with."""
COMPONENT_CHOICES = {
    "advantage": ADVANTAGES,
    "clip": CLIPS,
    "token_mask": TOKEN_MASKS,
    "reward": tuple(REWARDS),
    "optimizer": tuple(OPTIMIZERS),
}


@dataclass(frozen=True)
class Components:
    """The parts a training method is built from; the adapter picks its behaviour from these, never
    from a method's name (``infoppo_cli/train/methods.py`` and ``presets/methods.toml`` name them).

    advantage: ``gae`` (OpenRLHF's token-time GAE), ``info_time_gae`` (the paper's information-time
      GAE, which replaces OpenRLHF's GAE) or ``group_norm`` (group-normalised rewards, no critic).
    clip: ``fixed`` (OpenRLHF's clip) or ``adaptive`` (the paper's entropy-adaptive bounds).
    token_mask: ``all`` or ``top_entropy`` (only the highest-entropy tokens are in the policy loss).
    reward: ``binary`` (1 / 0) or ``signed`` (+1 / -1, DAPO's), the reward function's values.
    optimizer: whose AdamW defaults the method uses (its betas are OpenRLHF flags already).
    """

    advantage: str
    clip: str
    token_mask: str
    reward: str
    optimizer: str

    @property
    def uses_critic(self) -> bool:
        """Whether a critic is trained (GAE in token or information time)."""
        return self.advantage != "group_norm"

    @property
    def uses_rho(self) -> bool:
        """Information-time GAE and the adaptive clip both need rho, from the old policy's entropy."""
        return self.advantage == "info_time_gae" or self.clip == "adaptive"

    @property
    def needs_old_entropy(self) -> bool:
        """Whether infoppo's actor worker (old-policy entropy, infoppo's policy loss) and experience
        maker replace upstream's: for rho, or for the top-entropy token mask's loss."""
        return self.uses_rho or self.token_mask == "top_entropy"

    @property
    def reward_values(self) -> tuple[float, float]:
        """The reward of a correct response and of any other, before any length penalty."""
        return REWARDS[self.reward]

    @property
    def adam_betas(self) -> tuple[float, float]:
        """The AdamW betas of the actor (and critic)."""
        return OPTIMIZERS[self.optimizer]

    def components(self) -> dict[str, str]:
        """The parts by name, as ``--infotime.*`` flags carry them."""
        return {name: getattr(self, name) for name in COMPONENT_CHOICES}

    def needed_settings(self) -> tuple[str, ...]:
        """The method settings these parts read (a method must give each: no paper value is assumed)."""
        needed = ("eps_low_info", "eps_high_info") if self.clip == "adaptive" else ()
        needed += ("norm",) if self.uses_rho else ()
        return needed + (("top_entropy_frac",) if self.token_mask == "top_entropy" else ())


@dataclass(frozen=True)
class InfoSettings(Components):
    """Settings the OpenRLHF flags cannot express: the method's components (:class:`Components`) and
    settings, as the plan resolved them from ``presets/methods.toml`` (nothing defaults to a paper value).

    method: the method's name, a label for logs only: behaviour follows the components.
    eps_low_info, eps_high_info: adaptive-clip epsilons (an ``adaptive`` clip needs them).
    norm: entropy normalisation for rho, ``batch``, ``sentence`` or ``global`` (rho needs it).
    top_entropy_frac: the share of highest-entropy tokens that keep a gradient (``top_entropy``).
    overlong_buffer_frac: DAPO's overlong buffer as a share of the maximum response length (the plan
      turns it into ``reward.overlong_buffer_len``; read nowhere else).
    rl_steps: the run stops after this many RL steps (0: when OpenRLHF's episodes run out).
    total_optimizer_steps: the learning-rate schedule's length (0: OpenRLHF's ``max_steps``).
    eval_before: evaluate the base model before the first update (step 0) too.
    entropy_chunk_size: positions per chunk when computing the old policy's entropy.
    metrics_path: where the trainer appends one JSON line per step.
    ray_address: an existing Ray cluster to join; ``None`` starts an embedded local Ray.
    device: ``cuda`` (vLLM and DeepSpeed on GPUs) or ``cpu`` (DeepSpeed on its CPU accelerator and
      infoppo's CPU rollout engine in vLLM's place; ``openrlhf_adapter/cpu``).
    keep_ray_logs: keep an embedded Ray's session folder in the run directory (``ray-logs``).
    """

    method: str = ""
    eps_low_info: float | None = None
    eps_high_info: float | None = None
    norm: str | None = None
    top_entropy_frac: float | None = None
    overlong_buffer_frac: float | None = None
    rl_steps: int = 0
    total_optimizer_steps: int = 0
    eval_before: bool = False
    entropy_chunk_size: int = 256
    metrics_path: str | None = None
    ray_address: str | None = None
    device: str = "cuda"
    keep_ray_logs: bool = False

    def __post_init__(self) -> None:
        missing = [name for name in self.needed_settings() if getattr(self, name) is None]
        if missing:
            raise ValueError(
                f"method {self.method!r} ({', '.join(self.components().values())}) lacks the "
                f"setting(s) {', '.join(missing)}: `infoppo train` plans them from its method"
            )

    def as_namespace(self) -> SimpleNamespace:
        """The form attached to OpenRLHF's argument tree (picklable, like the rest of it)."""
        return SimpleNamespace(**asdict(self))

    @classmethod
    def from_args(cls, args: Any) -> InfoSettings:
        """Read the settings back from OpenRLHF's argument tree; their absence is an error (the run
        would silently train InfoPPO's defaults whatever method was planned)."""
        node = getattr(args, "infotime", None)
        if node is None:
            raise RuntimeError(
                "OpenRLHF's arguments carry no `infotime` settings: infoppo's launcher attaches them in "
                "a wrapper of openrlhf.utils.config.hierarchize (openrlhf_adapter/launch.py), which this "
                "process did not go through; start training with `infoppo train`"
            )
        return cls(**vars(node))


def split_argv(argv: list[str]) -> tuple[InfoSettings, list[str]]:
    """Separate ``--infotime.*`` flags (returned as settings) from OpenRLHF's flags."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for f in fields(InfoSettings):
        if f.type == "bool":
            parser.add_argument(f"{FLAG_PREFIX}{f.name}", dest=f.name, action="store_true")
            continue
        kind = {"float": float, "int": int}.get(str(f.type).split(" ")[0], str)
        if f.default is MISSING:  # a component: the plan always gives it
            parser.add_argument(f"{FLAG_PREFIX}{f.name}", dest=f.name, type=kind, required=True)
            continue
        parser.add_argument(f"{FLAG_PREFIX}{f.name}", dest=f.name, type=kind, default=f.default)
    known, rest = parser.parse_known_args(argv)
    return InfoSettings(**vars(known)), rest
