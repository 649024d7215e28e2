"""The information clock of one response: rho, Gamma_info(0, t) and the adaptive clip bounds per token.

All maths comes from :mod:`infoppo_cli.infotime` (the trainer's own functions); the defaults are the
``infoppo`` method's settings in ``presets/methods.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from infoppo_cli import infotime
from infoppo_cli.errors import UsageError

METHOD = "infoppo"
# The paper's defaults, used only if methods.toml stops naming one (it is being split into components).
_PAPER = {"gamma": 0.999, "eps_low": 10.0, "eps_high": 20.0, "norm": "batch"}


@dataclass(frozen=True)
class ClockSettings:
    """How entropies become the clock: ``norm`` mode, ``gamma`` and the adaptive clip's epsilons."""

    norm: str = _PAPER["norm"]
    gamma: float = _PAPER["gamma"]
    eps_low: float = _PAPER["eps_low"]
    eps_high: float = _PAPER["eps_high"]

    def __post_init__(self) -> None:
        if self.norm not in infotime.NORM_MODES:
            raise UsageError(f"--norm must be one of {', '.join(infotime.NORM_MODES)}, got {self.norm!r}")
        try:
            infotime.validate_hyperparameters(gamma=self.gamma, eps_low=self.eps_low, eps_high=self.eps_high)
        except ValueError as exc:
            raise UsageError(str(exc).replace("gamma", "--gamma").replace("eps_", "--eps-")) from None


def method_defaults() -> dict[str, object]:
    """The ``infoppo`` method's gamma, eps_low_info, eps_high_info and norm, read defensively through
    ``infoppo_cli.train.methods`` (each falls back to the paper's value if the method no longer sets it)."""
    try:
        from infoppo_cli.train.methods import method
    except ImportError:  # older layout: presets.method
        from infoppo_cli.train.presets import method  # type: ignore[attr-defined,no-redef]
    chosen = method(METHOD)
    flags = getattr(chosen, "openrlhf", {}) or {}
    settings = getattr(chosen, "infotime", {}) or {}
    return {
        "gamma": float(flags.get("algo.advantage.gamma", _PAPER["gamma"])),
        "eps_low": float(settings.get("eps_low_info", _PAPER["eps_low"])),
        "eps_high": float(settings.get("eps_high_info", _PAPER["eps_high"])),
        "norm": str(settings.get("norm", _PAPER["norm"])),
    }


@dataclass(frozen=True)
class Clock:
    """Per-token clock of one response (float32 tensors of the response's length)."""

    entropy: torch.Tensor
    rho: torch.Tensor
    gamma_info: torch.Tensor
    clip_low: torch.Tensor
    clip_high: torch.Tensor

    discount: float
    """Gamma_info(0, T) = :func:`infotime.info_discount`: the discount over the whole response."""


def file_max_entropy(entropies: list[torch.Tensor]) -> float:
    """The largest entropy of the whole file: ``--norm batch`` treats the file as one rollout batch."""
    return max((infotime.masked_max_entropy(h[None], torch.ones(1, len(h))) for h in entropies), default=0.0)


def clock(entropy: torch.Tensor, settings: ClockSettings, vocab_size: int, max_entropy: float) -> Clock:
    """The clock of one response from its token entropies (nats).

    ``rho`` is :func:`infotime.information_density` (``batch``: over the file, via ``max_entropy``);
    ``gamma_info[t] = Gamma_info(0, t) = gamma ** (rho_0 + ... + rho_{t-1})``, the discount the info-time
    GAE applies between the first token and token t (1 at t = 0), which is
    :func:`infotime.info_discount` of the first t tokens; the clip bounds are
    :func:`infotime.adaptive_clip_bounds`.
    """
    if entropy.numel() == 0:
        empty = torch.zeros(0)
        return Clock(empty, empty, empty, empty, empty, 1.0)
    h = entropy.float()[None]
    mask = torch.ones_like(h)
    rho = infotime.information_density(
        h,
        mask,
        settings.norm,
        vocab_size=vocab_size,
        max_entropy=max_entropy if settings.norm == "batch" else None,
    )
    elapsed_before = torch.cumsum(rho.double(), dim=-1) - rho.double()
    gamma_info = torch.pow(torch.tensor(settings.gamma, dtype=torch.float64), elapsed_before).float()
    low, high = infotime.adaptive_clip_bounds(rho, settings.eps_low, settings.eps_high)
    discount = float(infotime.info_discount(rho, mask, settings.gamma)[0])
    return Clock(entropy.float(), rho[0], gamma_info[0], low[0], high[0], discount)
