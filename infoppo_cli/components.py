"""The registry of method components: every part a training method may name in ``presets/methods.toml``,
registered once with what it needs and the function that computes it.

A method is one choice per kind (:data:`KINDS`): an advantage estimator, a clip rule and a token mask
(the policy loss), a reward and an optimizer. Information density rho has its own registry of
normalisations (:data:`NORMS`), chosen by a method's ``norm`` setting. Code elsewhere asks an entry
what it does (``uses_critic``, ``bounds``, ``keep``, ...) and never compares a component's name
(``tests/test_layout.py`` fails on such a comparison): a new component is one entry here, plus the
pure function in :mod:`infoppo_cli.infotime` where it brings new maths. Numeric defaults of the
method settings live in ``presets/methods.toml`` only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from infoppo_cli.hyperparameters import NON_NEGATIVE, OPEN_UNIT, UNIT, Range, Setting

if TYPE_CHECKING:
    from torch import Tensor


def _maths(name: str) -> Callable[..., Any]:
    """The function ``name`` of :mod:`infoppo_cli.infotime`, imported on its first call: the command
    line reads this registry without importing torch."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module("infoppo_cli.infotime"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


@dataclass(frozen=True)
class AdvantageEstimator:
    """How advantages are estimated.

    openrlhf_estimator: the ``--algo.advantage.estimator`` the method runs under.
    uses_critic: a value model is trained (GAE); without one, advantages come from the group's rewards.
    gae_with_rho: ``(rewards, values, rho, mask, gamma, lambd) -> (advantages, returns)``, GAE with
      rho as its clock, which replaces the body of OpenRLHF's GAE; ``None``: upstream's estimator runs
      unchanged.
    """

    name: str
    summary: str
    openrlhf_estimator: str
    uses_critic: bool
    gae_with_rho: Callable[..., tuple[Tensor, Tensor]] | None = None
    settings: tuple[str, ...] = ()

    @property
    def uses_rho(self) -> bool:
        return self.gae_with_rho is not None


@dataclass(frozen=True)
class ClipRule:
    """How the policy ratio is clipped. ``bounds(rho, *settings)`` gives per-token ``(lower, upper)``
    ratio bounds; ``None`` keeps OpenRLHF's constant ``actor.eps_clip_low_high``."""

    name: str
    summary: str
    settings: tuple[str, ...] = ()
    bounds: Callable[..., tuple[Tensor, Tensor]] | None = None

    @property
    def uses_rho(self) -> bool:
        return self.bounds is not None

    def bounds_for(self, rho: Tensor, settings: Any) -> tuple[Tensor, Tensor]:
        """The per-token bounds with the rule's settings read from ``settings`` (by attribute)."""
        assert self.bounds is not None, f"clip {self.name!r} has no per-token bounds"
        return self.bounds(rho, *(getattr(settings, name) for name in self.settings))


@dataclass(frozen=True)
class TokenMask:
    """Which tokens the policy loss keeps. ``keep(entropy, mask, *settings)`` selects them by the
    current policy's entropy; ``None`` keeps every response token."""

    name: str
    summary: str
    settings: tuple[str, ...] = ()
    keep: Callable[..., Tensor] | None = None

    @property
    def by_entropy(self) -> bool:
        """Whether the kept tokens are chosen by the current policy's entropy (not all of them)."""
        return self.keep is not None

    def keep_for(self, entropy: Tensor, mask: Tensor, settings: Any) -> Tensor:
        """The kept tokens with the mask's settings read from ``settings`` (by attribute)."""
        assert self.keep is not None, f"token mask {self.name!r} keeps every token"
        return self.keep(entropy, mask, *(getattr(settings, name) for name in self.settings))


@dataclass(frozen=True)
class Reward:
    """The verifiable reward: ``correct`` for a correct response, ``otherwise`` for any other (before a
    method's overlong penalty)."""

    name: str
    summary: str
    correct: float
    otherwise: float

    @property
    def values(self) -> tuple[float, float]:
        return self.correct, self.otherwise


@dataclass(frozen=True)
class Optimizer:
    """Whose AdamW defaults a method trains with: its ``betas`` (actor and critic)."""

    name: str
    summary: str
    betas: tuple[float, float]


class RhoInputs:
    """What a rollout batch offers a rho normalisation, built once per batch: the old policy's entropy
    and the action mask of each of its tensors, the model's config (Hugging Face's), and the values a
    normalisation may take after a tensor's own entropy and mask (the properties below), derived from
    those two the first time one asks for it. A normalisation that needs a new input is one more
    property here, whether it comes from the batch or from the model."""

    def __init__(
        self, entropies: Sequence[Tensor], masks: Sequence[Tensor], read_model_config: Callable[[], Any]
    ) -> None:
        self.entropies, self.masks = tuple(entropies), tuple(masks)
        self._read_model_config = read_model_config

    @cached_property
    def model_config(self) -> Any:
        """The policy's config, read only when a normalisation needs it."""
        return self._read_model_config()

    @cached_property
    def vocab_size(self) -> int:
        """The model's vocabulary size, its logits' width (a multimodal model's: its text model's)."""
        config = self.model_config
        return int(getattr(config, "vocab_size", None) or config.get_text_config().vocab_size)

    @cached_property
    def batch_max_entropy(self) -> float:
        """The largest entropy over every valid token of the batch (0.0 when there is none)."""
        largest = _maths("masked_max_entropy")
        return max((largest(h, m) for h, m in zip(self.entropies, self.masks, strict=True)), default=0.0)


@dataclass(frozen=True)
class RhoNormalisation:
    """How an entropy becomes information density rho in [0, 1].

    function: ``(entropy, mask, *inputs) -> rho`` for one tensor of the batch.
    inputs: the :class:`RhoInputs` values ``function`` takes after the entropy and mask, by name.
    """

    name: str
    summary: str
    function: Callable[..., Tensor]
    inputs: tuple[str, ...] = ()

    def density(self, entropy: Tensor, mask: Tensor, batch: RhoInputs) -> Tensor:
        """rho of ``entropy``, one tensor of ``batch``, with the batch's values this normalisation takes."""
        return self.function(entropy, mask, *(getattr(batch, name) for name in self.inputs))

    def densities(self, batch: RhoInputs) -> list[Tensor]:
        """rho of each tensor of ``batch``."""
        return [self.density(h, m, batch) for h, m in zip(batch.entropies, batch.masks, strict=True)]


Entry = TypeVar("Entry")


def _by_name(*entries: Entry) -> dict[str, Entry]:
    return {entry.name: entry for entry in entries}  # type: ignore[attr-defined]


ADVANTAGES = _by_name(
    AdvantageEstimator("gae", "token-time GAE (OpenRLHF's)", "gae", uses_critic=True),
    AdvantageEstimator(
        "info_time_gae",
        "GAE in information time (InfoPPO's info-time GAE)",
        "gae",
        uses_critic=True,
        gae_with_rho=_maths("info_time_gae"),
    ),
    AdvantageEstimator(
        "group_norm", "group-normalised rewards, no critic (GRPO, DAPO)", "group_norm", uses_critic=False
    ),
)
CLIPS = _by_name(
    ClipRule("fixed", "OpenRLHF's constant clip (actor.eps_clip_low_high)"),
    ClipRule(
        "adaptive",
        "entropy-adaptive per-token bounds (InfoPPO's adaptive clipping)",
        ("eps_low_info", "eps_high_info"),
        _maths("adaptive_clip_bounds"),
    ),
)
TOKEN_MASKS = _by_name(
    TokenMask("all", "every response token"),
    TokenMask(
        "top_entropy",
        "the highest-entropy tokens of the micro-batch (DAPO-FT, 'Beyond the 80/20 Rule')",
        ("top_entropy_frac",),
        _maths("high_entropy_mask"),
    ),
)
REWARDS = _by_name(
    Reward("binary", "1 if correct, else 0", 1.0, 0.0),
    # verl utils/reward_score/math_dapo.py::compute_score returns 1.0 if correct else -1.0
    Reward("signed", "+1 if correct, else -1 (DAPO's)", 1.0, -1.0),
)
OPTIMIZERS = _by_name(
    Optimizer("openrlhf", "OpenRLHF 0.11.2's --{actor,critic}.adam.betas default", (0.9, 0.95)),
    # verl workers/config/optimizer.py::OptimizerConfig.betas, which DAPO's official recipe runs with
    Optimizer("verl", "verl's AdamW betas", (0.9, 0.999)),
)
NORMS = _by_name(
    RhoNormalisation("global", "H / ln|V|", _maths("density_by_vocabulary"), ("vocab_size",)),
    RhoNormalisation(
        "batch", "H / max H over the rollout batch", _maths("density_by_batch"), ("batch_max_entropy",)
    ),
    RhoNormalisation("sentence", "H / max H of the response", _maths("density_by_response")),
)
UNNAMED_NORM = "batch"
"""The normalisation of the ``rho_mean`` a method without rho logs (InfoPPO's default)."""
KINDS: Mapping[str, Mapping[str, Any]] = {
    "advantage": ADVANTAGES,
    "clip": CLIPS,
    "token_mask": TOKEN_MASKS,
    "reward": REWARDS,
    "optimizer": OPTIMIZERS,
}
"""What a method names, one entry per kind, in the order a method lists them."""
RHO_SETTING = "norm"
"""The method setting that names the rho normalisation (read by every component that uses rho)."""

SETTINGS: Mapping[str, Setting] = {
    setting.name: setting
    for setting in (
        Setting(
            "gamma",
            "Discount gamma in (0, 1].",
            range=OPEN_UNIT,
            openrlhf="algo.advantage.gamma",
            applies=lambda method: method.uses_critic,
            applies_text="with a critic (GAE)",
        ),
        Setting(
            "lambd",
            "GAE lambda in [0, 1].",
            range=UNIT,
            flags=("--lambda", "--lambd"),
            openrlhf="algo.advantage.lambd",
            applies=lambda method: method.uses_critic,
            applies_text="with a critic (GAE)",
        ),
        Setting("eps_low_info", "Adaptive-clip eps_low >= 0.", range=NON_NEGATIVE),
        Setting("eps_high_info", "Adaptive-clip eps_high >= 0.", range=NON_NEGATIVE),
        Setting(
            RHO_SETTING,
            "Entropy normalisation for rho.",
            kind=str,
            choices=tuple(NORMS),
            applies_text="that uses rho",
        ),
        Setting(
            "top_entropy_frac", "Share of highest-entropy tokens the loss keeps, in (0, 1].", range=OPEN_UNIT
        ),
        Setting(
            "overlong_buffer_frac",
            "DAPO's overlong buffer as a share of the maximum response length, in (0, 1).",
            range=Range(0.0, 1.0, low_open=True, high_open=True),
            flags=(),
            run_defining=False,
        ),
        Setting(
            "keep_stale_surplus",
            "Train the groups generated beyond a step's batch at the next step (full_batches.py).",
            kind=bool,
            flags=(),
            run_defining=False,
        ),
    )
}
"""Every method setting, declared once (its range, help, option, and where its value lives): the
components above read them by name; the request, the methods file's schema, ``--resume``'s keys and
the plan's rows are derived from here (``hyperparameters.Setting``)."""


def component(kind: str, name: str) -> Any:
    """The registered ``kind`` component called ``name``; a ``ValueError`` lists the choices."""
    entries = KINDS.get(kind, NORMS if kind == RHO_SETTING else None)
    if entries is None:
        raise ValueError(f"no component kind {kind!r}; choose one of {', '.join([*KINDS, RHO_SETTING])}")
    if name not in entries:
        raise ValueError(f"unknown {kind} {name!r}; choose one of {', '.join(entries)}")
    return entries[name]


def rho_normalisation(name: str) -> RhoNormalisation:
    """The rho normalisation called ``name`` (``ValueError`` listing the choices)."""
    return component(RHO_SETTING, name)
