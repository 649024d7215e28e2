"""Information-time PPO: InfoPPO's mathematics as pure torch functions.

Nothing here imports OpenRLHF, Ray or vLLM, so verl, TRL or a notebook can use it as is.
Tensors are ``(batch, T)`` with a 0/1 ``mask`` of valid response tokens (right- or left-padded).

Notation (InfoPPO's):

* ``H_t``   next-token entropy of the old policy at position t (nats).
* ``rho_t`` information density, ``H_t`` normalised into [0, 1] (Eq. "information time").
* info-time GAE: ``delta_t = r_t + gamma**rho_t * V_{t+1} - V_t`` and
  ``A_t = delta_t + (gamma * lambd)**rho_t * A_{t+1}``; with ``rho == 1`` it is standard GAE.
* adaptive clipping: the ratio is clipped to
  ``[1 / (1 + log(1 + eps_low * rho_t)), 1 + log(1 + eps_high * rho_t)]`` per token.
"""

from __future__ import annotations

import math

import torch

from infoppo_cli.hyperparameters import validate_hyperparameters

Tensor = torch.Tensor

# The scan works in float64 log-space chunks of _SCAN_CHUNK positions. A per-token log-decay is
# floored at _MIN_LOG_DECAY (a decay below 4e-18 counts as 4e-18), so exp(+-sum) over one chunk
# stays within float64's range (16 * 40 = 640 < 709) and nothing divides by an underflowed product.
_SCAN_CHUNK = 16
_MIN_LOG_DECAY = -40.0


# --------------------------------------------------------------------------- argument checks


def _check_same_shape(**tensors: torch.Tensor) -> None:
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name}{list(shape)}" for name, shape in shapes.items())
        raise ValueError(f"shapes must agree: {listed}")
    if any(len(shape) != 2 for shape in shapes.values()):
        raise ValueError(f"expected (batch, T) tensors, got shape {next(iter(shapes.values()))}")


# --------------------------------------------------------------------------- entropy and density


def _chunk_entropy(x: torch.Tensor) -> torch.Tensor:
    """Entropy of each row of logits ``x`` (rows, V); its big temporaries die on return.

    Centred as logsumexp is: with ``c = x - max x`` (all <= 0), ``e = exp(c)`` and ``s = sum e``,
    ``H = log s - (e . c) / s``. The uncentred form ``max x + log s - (e . x) / s`` cancels two large
    terms and loses ~1e-3 nats in float32 at a vocabulary of 151,936; this one stays within 1e-5.
    """
    centred = x - x.amax(dim=-1, keepdim=True)
    e = centred.exp()
    total = e.sum(dim=-1)
    # an elementwise product and torch's pairwise sum, not a bmm: a float32 (or TF32) matmul
    # accumulates 151,936 terms with ~2e-4 relative error; 0 * -inf (a masked logit) counts 0
    dot = centred.mul_(e).nan_to_num_(nan=0.0).sum(dim=-1)
    return (total.log() - dot / total).float()


@torch.no_grad()
def token_entropy(logits: torch.Tensor, chunk_size: int = 256) -> torch.Tensor:
    """Next-token entropy ``H = -sum_v p_v log p_v`` in nats, shape ``logits.shape[:-1]``, float32.

    Evaluated ``chunk_size`` positions at a time, accumulating in float32 (float64 stays float64):
    with ``c = x - max x``, ``e = exp(c)`` and ``s = sum e``, ``H = log s - (e . c) / s`` (centred, as
    logsumexp is). Each chunk needs two ``(chunk_size, V)`` temporaries, so the extra memory is
    O(chunk_size * V), not O(B * T * V), and no autograd graph is kept. Vocabulary entries at
    ``-inf`` contribute nothing. Float32 error: <= 1e-5 nats against float64 at V = 151,936.
    """
    if logits.dim() < 2:
        raise ValueError(f"logits must have shape (..., V), got {list(logits.shape)}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    work_dtype = torch.float64 if logits.dtype == torch.float64 else torch.float32
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.empty(flat.shape[0], dtype=torch.float32, device=logits.device)
    for start in range(0, flat.shape[0], chunk_size):
        out[start : start + chunk_size] = _chunk_entropy(flat[start : start + chunk_size].to(work_dtype))
    return out.reshape(logits.shape[:-1])


def _checked_entropy(entropy: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Entropies as float with invalid positions 0, and the validity mask; non-finite valid values are
    refused, rounding's tiny negatives (``-1e-7`` for a one-hot distribution) become 0."""
    _check_same_shape(entropy=entropy, mask=mask)
    valid = mask.bool()
    bad = valid & ~torch.isfinite(entropy)
    if bad.any():
        kind = "NaN" if torch.isnan(entropy[bad]).any() else "infinite"
        raise ValueError(f"entropy has {kind} values at {int(bad.sum())} valid positions")
    return entropy.float().masked_fill(~valid, 0.0).clamp(min=0.0), valid


def _scaled(h: torch.Tensor, valid: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """``h / scale`` in [0, 1]; a zero scale yields rho = 0 (never NaN); invalid positions are 0."""
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    rho = torch.where(scale > 0, h / safe, torch.zeros_like(h))
    return rho.clamp(0.0, 1.0).masked_fill(~valid, 0.0)


def density_by_vocabulary(entropy: torch.Tensor, mask: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """Information density ``rho = H / ln(vocab_size)`` (InfoPPO's ``global`` normalisation of the
    information-time definition): the largest entropy a V-way softmax can have is ``ln V``."""
    h, valid = _checked_entropy(entropy, mask)
    if vocab_size is None or vocab_size < 2:
        raise ValueError(f"global normalisation needs vocab_size >= 2, got {vocab_size}")
    return _scaled(h, valid, torch.tensor(math.log(vocab_size)))


def density_by_batch(entropy: torch.Tensor, mask: torch.Tensor, max_entropy: float | None) -> torch.Tensor:
    """Information density ``rho = H / max H`` over every valid token of the rollout batch (InfoPPO's
    ``batch`` normalisation). ``max_entropy`` is that maximum when the batch is split over several
    tensors (:func:`masked_max_entropy` of each, combined with ``max``); ``None``: this tensor's own."""
    h, valid = _checked_entropy(entropy, mask)
    scale = h.max() if max_entropy is None else torch.tensor(float(max_entropy))
    return _scaled(h, valid, scale)


def density_by_response(entropy: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Information density ``rho = H / max H`` over the valid tokens of each row, one response
    (InfoPPO's ``sentence`` normalisation)."""
    h, valid = _checked_entropy(entropy, mask)
    return _scaled(h, valid, h.amax(dim=-1, keepdim=True))


def masked_max_entropy(entropy: torch.Tensor, mask: torch.Tensor) -> float:
    """Largest entropy among valid tokens (0.0 when there are none); combine with ``max`` across tensors."""
    _check_same_shape(entropy=entropy, mask=mask)
    valid = mask.bool()
    return float(entropy.float()[valid].max()) if valid.any() else 0.0


# --------------------------------------------------------------------------- information-time GAE


def _solve_chunks(x: torch.Tensor, log_c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Solve ``y_t = x_t + c_t * y_{t+1}`` inside each chunk (last dim) with zero carry-in.

    With ``Q_k = sum_{j<k} log c_j``: ``y_t = exp(-Q_t) * sum_{k>=t} exp(Q_k) x_k``.
    Returns ``y``, the decay ``g_t = prod_{j>=t} c_j`` from t to the chunk's end, and ``log g_0``.
    """
    q = torch.cumsum(log_c, dim=-1) - log_c  # exclusive prefix sum, >= 15 * _MIN_LOG_DECAY
    e = torch.exp(q)  # the only large exp; 1/e stays finite in float64
    suffix = torch.flip(torch.cumsum(torch.flip(e * x, (-1,)), dim=-1), (-1,))
    log_total = q[..., -1] + log_c[..., -1]
    return suffix / e, torch.exp(log_total).unsqueeze(-1) / e, log_total


def _linear_recurrence(x: torch.Tensor, log_c: torch.Tensor) -> torch.Tensor:
    """Solve ``y_t = x_t + exp(log_c_t) * y_{t+1}`` with ``y_T = 0`` along the last dim, no token loop.

    Chunks are solved in parallel; their start values obey the same recurrence one level up,
    which is solved recursively (depth ``log_16 T``).
    """
    length = x.shape[-1]
    pad = (-length) % _SCAN_CHUNK
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
        log_c = torch.nn.functional.pad(log_c, (0, pad))
    chunks = x.shape[-1] // _SCAN_CHUNK
    xs = x.reshape(*x.shape[:-1], chunks, _SCAN_CHUNK)
    y, decay, log_chunk_decay = _solve_chunks(xs, log_c.reshape(xs.shape))
    if chunks > 1:
        starts = _linear_recurrence(y[..., 0], log_chunk_decay.clamp(min=_MIN_LOG_DECAY))
        carry_in = torch.nn.functional.pad(starts[..., 1:], (0, 1))
        y = y + decay * carry_in.unsqueeze(-1)
    return y.reshape(*x.shape[:-1], -1)[..., :length]


def info_time_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    rho: torch.Tensor,
    mask: torch.Tensor,
    gamma: float,
    lambd: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Information-time GAE (InfoPPO, info-time advantage equation): returns ``(advantages, returns)``.

    ``delta_t = r_t + gamma**rho_t * V_{t+1} - V_t`` and ``A_t = delta_t + (gamma*lambd)**rho_t * A_{t+1}``,
    equivalently ``A_t = sum_l (gamma*lambd)**(rho_t + ... + rho_{t+l-1}) * delta_{t+l}``.
    Conventions follow OpenRLHF's ``get_advantages_and_returns``: rewards and values are multiplied by
    ``mask``, V after the last position is 0, ``returns = A + V``; both outputs are 0 where ``mask`` is 0.
    With ``rho == mask`` this is exactly standard GAE. Computed as a float64 chunked log-space scan
    (no per-token Python loop); the result has dtype ``promote(values, rewards, float32)``.
    """
    validate_hyperparameters(gamma=gamma, lambd=lambd)
    _check_same_shape(rewards=rewards, values=values, rho=rho, mask=mask)
    out_dtype = torch.promote_types(torch.promote_types(values.dtype, rewards.dtype), torch.float32)
    with torch.no_grad():
        m = mask.to(torch.float64)
        v = values.to(torch.float64) * m
        r = rewards.to(torch.float64) * m
        p = rho.to(torch.float64)
        next_v = torch.nn.functional.pad(v[:, 1:], (0, 1))
        delta = r + torch.exp(p * math.log(gamma)) * next_v - v
        # log((gamma*lambd)**rho), with 0**0 = 1: rho = 0 never decays, even when gamma*lambd = 0
        log_trace = torch.xlogy(p, torch.tensor(gamma * lambd, dtype=p.dtype))
        adv = _linear_recurrence(delta, log_trace.clamp(min=_MIN_LOG_DECAY)) * m
        returns = (adv + v) * m
    return adv.to(out_dtype), returns.to(out_dtype)


def info_time_gae_loop(
    rewards: Tensor, values: Tensor, rho: Tensor, mask: Tensor, gamma: float, lambd: float
) -> tuple[Tensor, Tensor]:
    """Reference implementation of :func:`info_time_gae` as a per-token reverse loop.

    Same maths and conventions, written the way OpenRLHF writes GAE; used by tests and benchmarks.
    """
    validate_hyperparameters(gamma=gamma, lambd=lambd)
    _check_same_shape(rewards=rewards, values=values, rho=rho, mask=mask)
    m = mask.to(values.dtype)
    v, r = values * m, rewards * m
    discount, trace = torch.pow(gamma, rho.to(v.dtype)), torch.pow(gamma * lambd, rho.to(v.dtype))
    last = torch.zeros_like(v[:, 0])
    out = []
    for t in reversed(range(v.shape[1])):
        next_v = v[:, t + 1] if t + 1 < v.shape[1] else torch.zeros_like(last)
        last = r[:, t] + discount[:, t] * next_v - v[:, t] + trace[:, t] * last
        out.append(last)
    adv = torch.stack(out[::-1], dim=1) * m
    return adv, (adv + v) * m


def info_discount(rho: torch.Tensor, mask: torch.Tensor, gamma: float) -> torch.Tensor:
    """Per-sequence information-time discount ``Gamma_info(0, T) = gamma ** sum_t rho_t``."""
    validate_hyperparameters(gamma=gamma)
    _check_same_shape(rho=rho, mask=mask)
    elapsed = (rho.double() * mask.double()).sum(dim=-1)
    return torch.pow(gamma, elapsed).float()


def token_discount(mask: torch.Tensor, gamma: float) -> torch.Tensor:
    """Per-sequence token-time discount ``Gamma_token(0, T) = gamma ** T``, ``T`` the response's length
    in tokens: what standard GAE's clock gives the same response (:func:`info_discount` with rho = 1)."""
    validate_hyperparameters(gamma=gamma)
    return torch.pow(gamma, mask.double().sum(dim=-1)).float()


# --------------------------------------------------------------------------- adaptive clipping


def adaptive_clip_bounds(
    rho: torch.Tensor, eps_low: float, eps_high: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token ratio bounds (InfoPPO adaptive clipping), detached.

    ``lower = 1 / (1 + log(1 + eps_low * rho))`` and ``upper = 1 + log(1 + eps_high * rho)``.
    At ``rho = 0`` both are 1: a token the old policy was certain about cannot move.
    """
    validate_hyperparameters(eps_low=eps_low, eps_high=eps_high)
    r = rho.detach().float()
    return 1.0 / (1.0 + torch.log1p(eps_low * r)), 1.0 + torch.log1p(eps_high * r)


@torch.no_grad()
def clip_statistics(
    ratio: torch.Tensor,
    advantages: torch.Tensor,
    lower: torch.Tensor,
    upper: torch.Tensor,
    mask: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """Clip diagnostics over valid tokens, as 0-d tensors.

    ``clip_frac_upper``: share of tokens with ``ratio > upper`` and ``A > 0`` (the clip removes their
    gradient); ``clip_frac_lower``: ``ratio < lower`` and ``A < 0``; ``clip_upper_mean`` and
    ``clip_lower_mean``: the bounds averaged over valid tokens.
    """
    valid = mask.bool()
    count = valid.sum().clamp(min=1)
    ratio = ratio.detach()
    return {
        "clip_frac_upper": (valid & (ratio > upper) & (advantages > 0)).sum() / count,
        "clip_frac_lower": (valid & (ratio < lower) & (advantages < 0)).sum() / count,
        "clip_upper_mean": (upper * valid).sum() / count,
        "clip_lower_mean": (lower * valid).sum() / count,
    }


# --------------------------------------------------------------------------- DAPO-FT baseline


@torch.no_grad()
def high_entropy_mask(entropy: torch.Tensor, mask: torch.Tensor, top_frac: float) -> torch.Tensor:
    """Bool mask of the ``ceil(top_frac * N)`` highest-entropy tokens among the N valid ones.

    The DAPO-FT baseline ("Beyond the 80/20 Rule"): the policy-gradient loss keeps only these tokens.
    """
    validate_hyperparameters(top_frac=top_frac)
    _check_same_shape(entropy=entropy, mask=mask)
    valid = mask.bool()
    n_valid = int(valid.sum())
    keep = torch.zeros_like(valid)
    if n_valid == 0:
        return keep
    k = math.ceil(top_frac * n_valid - 1e-9)
    scores = entropy.float().masked_fill(~valid, float("-inf")).flatten()
    top = torch.topk(scores, k).indices
    keep.view(-1)[top] = True
    return keep
