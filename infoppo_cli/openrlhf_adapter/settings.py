"""infoppo's own training settings: written once by the plan into the run directory (``RUN/config.json``),
read from there by the launcher, which attaches them to OpenRLHF's argument tree (``args.infotime``) that
every OpenRLHF process receives, and by the reward function in the rollout workers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, make_dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from infoppo_cli import components
from infoppo_cli.atomic import atomic_write_json
from infoppo_cli.records.text import loads

CONFIG_FILE = "config.json"
"""The run's configuration in its directory: infoppo's settings of the run (OpenRLHF gets its own flags on
its command line, where its parser checks them)."""
CONFIG_SCHEMA = 1
CONFIG_ENV = "INFOPPO_RUN_CONFIG"
"""The path of the run's configuration, for the reward function: OpenRLHF loads it by path in the rollout
workers and gives it no arguments of infoppo's (the path only, never a setting)."""


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
class _RunSettings(Components):
    """Settings the OpenRLHF flags cannot express: the method's components (:class:`Components`) and
    settings, as the plan resolved them from ``presets/methods.toml`` (nothing defaults to an InfoPPO value).

    method: the method's name, a label for logs only: behaviour follows the components.
    rl_steps: the run stops after this many RL steps (0: when OpenRLHF's episodes run out).
    total_optimizer_steps: the learning-rate schedule's length (0: OpenRLHF's ``max_steps``).
    eval_before: evaluate the base model before the first update (step 0) too.
    entropy_chunk_size: positions per chunk when computing the old policy's entropy.
    metrics_path: where the trainer appends one JSON line per step.
    ray_address: an existing Ray cluster to join; ``None`` starts an embedded local Ray.
    device: ``cuda`` (vLLM and DeepSpeed on GPUs) or ``cpu`` (DeepSpeed on its CPU accelerator and
      infoppo's CPU rollout engine in vLLM's place; ``openrlhf_adapter/cpu``).
    keep_ray_logs: keep an embedded Ray's session folder in the run directory (``ray-logs``).
    and every method setting infoppo carries itself (``components.SETTINGS``: the adaptive clip's
    epsilons, rho's ``norm``, DAPO-FT's ``top_entropy_frac``, ...), ``None`` where the method gives none
    (a ``bool`` one: ``False``).
    """

    method: str = ""
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
    def from_args(cls, args: Any) -> Any:
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


def _setting_field(setting: components.Setting) -> tuple[str, Any, Any]:
    return setting.name, setting.kind | None, field(default=False if setting.kind is bool else None)


InfoSettings = make_dataclass(
    "InfoSettings",
    [_setting_field(s) for s in components.SETTINGS.values() if s.openrlhf is None],
    bases=(_RunSettings,),
    frozen=True,
    namespace={"__module__": __name__, "__doc__": _RunSettings.__doc__},
)
"""infoppo's settings of a run: :class:`_RunSettings` and every method setting infoppo carries."""


def write_run_config(path: str | os.PathLike[str], settings: Mapping[str, Any]) -> None:
    """Write the run's configuration (``settings``: :class:`InfoSettings`' fields), atomically, once
    they make an :class:`InfoSettings`."""
    InfoSettings(**settings)
    atomic_write_json(path, {"schema": CONFIG_SCHEMA, "infotime": dict(settings)})


def read_run_config(path: str | os.PathLike[str]) -> Any:
    """The :class:`InfoSettings` of the run configuration at ``path``; a missing or malformed file, or a
    component that is not registered, is a one-line ``ValueError`` that names the file."""
    try:
        document = loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(document, dict) or document.get("schema") != CONFIG_SCHEMA:
            raise ValueError(f"not an infoppo run configuration of schema {CONFIG_SCHEMA}")
        settings = InfoSettings(**document["infotime"])
        for kind, name in settings.components().items():
            components.component(kind, name)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read the run configuration {path}: {exc}") from None
    return settings
