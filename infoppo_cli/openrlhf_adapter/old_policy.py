"""The old policy's log-probs and entropy from one forward pass of OpenRLHF's ``Actor``."""

from __future__ import annotations

from typing import Any

import openrlhf.models.actor as actor_module
import torch

from infoppo_cli.infotime import token_entropy

_MARK = "_infoppo_chunked"


def old_policy_forward(
    actor: Any,
    sequences: torch.Tensor,
    action_mask: torch.Tensor,
    attention_mask: torch.Tensor,
    device: torch.device | str,
    ring_attn_group: Any = None,
    mm_inputs: dict[str, Any] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log pi_old(a_t|s_t), H_old(s_t))`` for every action, both (B, A) float32 on the CPU.

    One no-grad forward of OpenRLHF's ``Actor`` gives both (``return_entropy=True``), so rho costs
    no extra model pass; the entropy is aligned with the log-probs and zero off ``action_mask``.
    """
    actor.eval()
    try:
        with torch.no_grad():
            log_probs, output = actor(
                sequences.to(device),
                action_mask.to(device),
                attention_mask.to(device),
                return_output=True,
                return_entropy=True,
                ring_attn_group=ring_attn_group,
                **(mm_inputs or {}),
            )
    finally:
        actor.train()
    mask = action_mask.to(device)
    entropy = output.entropy[:, -mask.shape[1] :] * mask
    return log_probs.to("cpu"), entropy.float().to("cpu")


def install_chunked_entropy(chunk_size: int, entropy_gradient: bool = True) -> None:
    """Make OpenRLHF's ``Actor`` compute entropies with :func:`token_entropy` (this process).

    Upstream evaluates softmax-sized temporaries over the whole (B, T, V) logits and, in the
    training forward, keeps them for backward; chunking bounds that to ``chunk_size * V`` and keeps
    nothing. A forward that needs entropy gradients (an entropy bonus, ``entropy_gradient``) keeps
    the upstream function; without a bonus (``actor.entropy_coef`` 0: DAPO-FT reads the training
    forward's entropy for its token mask only) the entropy is computed detached.
    """
    upstream = getattr(actor_module.compute_entropy, "upstream", actor_module.compute_entropy)

    def entropy(logits: torch.Tensor) -> torch.Tensor:
        if logits.requires_grad and entropy_gradient:
            return upstream(logits)
        return token_entropy(logits.detach(), chunk_size=chunk_size)

    setattr(entropy, _MARK, True)
    entropy.upstream = upstream  # type: ignore[attr-defined]
    actor_module.compute_entropy = entropy
