"""infoppo's own training settings, carried to every OpenRLHF process as ``args.infotime``."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, asdict, dataclass, fields
from types import SimpleNamespace
from typing import Any

from infoppo_cli import components

FLAG_PREFIX = "--infotime."
REWARD_STYLE_ENV = "INFOPPO_REWARD_STYLE"
"""How the launcher tells the reward function (loaded by path in the rollout workers) its values."""


@dataclass(frozen=True)
class Components:
    """The parts a training method is built from, by their names in :mod:`infoppo_cli.components`; the
    adapter asks the registered entries what to do, never a method's or a component's name
    (``infoppo_cli/train/methods.py`` and ``presets/methods.toml`` name them).

    advantage, clip, token_mask, reward, optimizer: one registered name per kind (``components.KINDS``).
    """

    advantage: str
    clip: str
    token_mask: str
    reward: str
    optimizer: str

    @property
    def advantage_estimator(self) -> components.AdvantageEstimator:
        return components.component("advantage", self.advantage)

    @property
    def clip_rule(self) -> components.ClipRule:
        return components.component("clip", self.clip)

    @property
    def loss_tokens(self) -> components.TokenMask:
        return components.component("token_mask", self.token_mask)

    @property
    def uses_critic(self) -> bool:
        """Whether a critic is trained (GAE in token or information time)."""
        return self.advantage_estimator.uses_critic

    @property
    def uses_rho(self) -> bool:
        """Whether rho, from the old policy's entropy, is needed (an information-time clock or a
        per-token clip)."""
        return self.advantage_estimator.uses_rho or self.clip_rule.uses_rho

    @property
    def reward_values(self) -> tuple[float, float]:
        """The reward of a correct response and of any other, before any length penalty."""
        return components.component("reward", self.reward).values

    @property
    def adam_betas(self) -> tuple[float, float]:
        """The AdamW betas of the actor (and critic)."""
        return components.component("optimizer", self.optimizer).betas

    def components(self) -> dict[str, str]:
        """The parts by name, as ``--infotime.*`` flags carry them."""
        return {kind: getattr(self, kind) for kind in components.KINDS}

    def needed_settings(self) -> tuple[str, ...]:
        """The method settings these parts read (a method must give each: no InfoPPO default is assumed)."""
        needed = self.advantage_estimator.settings + self.clip_rule.settings
        needed += (components.RHO_SETTING,) if self.uses_rho else ()
        return needed + self.loss_tokens.settings


@dataclass(frozen=True)
class InfoSettings(Components):
    """Settings the OpenRLHF flags cannot express: the method's components (:class:`Components`) and
    settings, as the plan resolved them from ``presets/methods.toml`` (nothing defaults to an InfoPPO value).

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
    keep_stale_surplus: train the groups generated beyond a step's batch at the next step, one policy
      update stale and uncorrected, instead of dropping them as verl does (``full_batches.py``; a
      method's ``[NAME.infotime]`` asks for it; each step logs ``stale_groups_trained``).
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
    keep_stale_surplus: bool = False

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
