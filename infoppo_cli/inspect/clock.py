"""The information clock of one response: rho, Gamma_info(0, t) and the adaptive clip bounds per token.

All maths comes from :mod:`infoppo_cli.infotime` (the trainer's own functions); the settings
(:class:`~infoppo_cli.inspect.settings.ClockSettings`) default to the ``infoppo`` method's in
``presets/methods.toml``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from infoppo_cli import infotime
from infoppo_cli.components import RhoInputs, rho_normalisation
from infoppo_cli.inspect.settings import ClockSettings


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
    token_discount: float = 1.0
    """Gamma_token(0, T) = gamma ** T = :func:`infotime.token_discount`: token time's, for comparison."""


def file_inputs(entropies: list[torch.Tensor], model_config: Any) -> RhoInputs:
    """The responses of one file (their token entropies under the model whose config is
    ``model_config``) as what a rollout batch offers a rho normalisation: ``--norm batch`` treats the
    file as one rollout batch."""
    return RhoInputs(
        [h.float()[None] for h in entropies], [torch.ones(1, len(h)) for h in entropies], lambda: model_config
    )


def clock(entropy: torch.Tensor, settings: ClockSettings, file: RhoInputs) -> Clock:
    """The clock of one response of ``file`` from its token entropies (nats).

    ``rho`` is the registered normalisation ``settings.norm`` (``batch``: over the file);
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
    norm = rho_normalisation(settings.norm)
    rho = norm.density(h, mask, file)
    elapsed_before = torch.cumsum(rho.double(), dim=-1) - rho.double()
    gamma_info = torch.pow(torch.tensor(settings.gamma, dtype=torch.float64), elapsed_before).float()
    low, high = infotime.adaptive_clip_bounds(rho, settings.eps_low_info, settings.eps_high_info)
    discount = float(infotime.info_discount(rho, mask, settings.gamma)[0])
    token = float(infotime.token_discount(mask, settings.gamma)[0])
    return Clock(entropy.float(), rho[0], gamma_info[0], low[0], high[0], discount, token)


def discount_text(value: float | None, digits: int = 3) -> str:
    """Γ_info (or any discount in [0, 1]) printed so that a value below 1 never reads as 1: ``digits``
    significant digits, and near 1 enough decimals for two significant digits of ``1 - value``
    (0.99987, 0.9999991); ``-`` for none."""
    if value is None:
        return "-"
    if not math.isfinite(value) or value >= 1.0 or value <= 0.0:
        return f"{value:g}"
    gap = 1.0 - value
    if gap >= 0.1:
        return f"{value:.{digits}g}"
    decimals = max(digits, math.ceil(-math.log10(gap) - 1e-9) + 1)
    return f"{value:.{decimals}f}".rstrip("0")
