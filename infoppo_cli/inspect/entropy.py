"""The old policy's next-token entropy on each response token: one teacher-forced forward per response.

Responses are batched by length (right-padded, so a token sees exactly its own prefix) and run on the GPU
when there is one (bfloat16, as OpenRLHF's ``--bf16`` old policy), else on the CPU (float32). The
entropy of token t is that of the distribution the model predicted it from (the logits at the position
before it), as OpenRLHF's experience maker computes it. The output head runs on 256 positions at a time
and :func:`infotime.token_entropy` reduces each chunk, so no ``(batch, length, vocab)`` logits or
softmax-sized temporaries of the whole sequence exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

from infoppo_cli.data.hub import loading
from infoppo_cli.errors import UsageError
from infoppo_cli.infotime import token_entropy

HEAD_CHUNK = 256
"""Positions per call of the output head (and per entropy reduction)."""

# Configs whose logits are not plain ``lm_head(hidden)``: then the model's own forward computes them.
_LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "logits_scaling", "output_multiplier_scale")

LOAD_ERRORS = (OSError, ValueError, KeyError, RuntimeError, TypeError)
"""What transformers raises for a directory that is not a model (a config it cannot read, and so on)."""
LOAD_ADVICE = "pass --model DIR, a downloaded copy"


@dataclass(frozen=True)
class Tokenized:
    """One response as token ids: the rendered prompt's and the response's (no special tokens added)."""

    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]


@dataclass
class Policy:
    """A loaded causal LM, its tokenizer and where it runs."""

    name: str
    model: Any
    tokenizer: Any
    device: torch.device
    config: Any
    """The model's config (Hugging Face's), kept when the weights are released."""
    max_positions: int | None = None
    """The config's ``max_position_embeddings``: the longest sequence the model was built for."""

    def release(self) -> None:
        """Free the weights (the tokenizer and the config stay)."""
        self.model = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def load_tokenizer(name: str) -> Any:
    """The tokenizer of a model directory or Hub id (:class:`UsageError` if it cannot load)."""
    if name.startswith(("/", ".", "~")) and not Path(name).expanduser().exists():
        raise UsageError(f"cannot load the model {name}: no such directory")
    with loading(f"the model {name}", name, LOAD_ERRORS, LOAD_ADVICE):
        return AutoTokenizer.from_pretrained(name)


def load_policy(name: str, device: str | None = None, dtype: torch.dtype | None = None) -> Policy:
    """Load a model directory or Hub id with transformers; one that cannot load is a :class:`UsageError`."""
    hf_logging.disable_progress_bar()  # inspect draws its own progress bar
    chosen = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = dtype or (torch.bfloat16 if chosen.type == "cuda" else torch.float32)
    tokenizer = load_tokenizer(name)
    with loading(f"the model {name}", name, LOAD_ERRORS, LOAD_ADVICE):
        model = AutoModelForCausalLM.from_pretrained(name, dtype=dtype)
    positions = getattr(model.config, "max_position_embeddings", None)
    limit = positions if isinstance(positions, int) and positions > 0 else None
    return Policy(name, model.to(chosen).eval(), tokenizer, chosen, model.config, limit)


def policy_identity(name: str) -> str:
    """A stable name of the model's weights for the resume store: a local directory's resolved path and
    the modification times of its weight files, or the Hub id."""
    path = Path(name).expanduser()
    if not path.is_dir():
        return name
    stamps = sorted(
        f"{p.name}:{p.stat().st_mtime_ns}"
        for p in path.iterdir()
        if re.search(r"\.(safetensors|bin)$", p.name)
    )
    return f"{path.resolve()}|{'|'.join(stamps)}"


def tokenize(tokenizer: Any, prompt_text: str, response: str) -> Tokenized:
    """The ids the trainer sees: the rendered prompt then the response, each without added special tokens."""
    prompt_ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    response_ids = tokenizer(response, add_special_tokens=False)["input_ids"]
    if not prompt_ids:
        raise UsageError(
            "a prompt renders to no tokens; the first response token has nothing to condition on"
        )
    return Tokenized(tuple(prompt_ids), tuple(response_ids))


def batches(items: Sequence[Tokenized], max_tokens: int) -> Iterator[list[int]]:
    """Indices of ``items`` in batches of similar length, each at most ``max_tokens`` padded tokens
    (a longer sequence runs alone)."""
    order = sorted(range(len(items)), key=lambda i: len(items[i].prompt_ids) + len(items[i].response_ids))
    batch: list[int] = []
    for index in order:
        length = len(items[index].prompt_ids) + len(items[index].response_ids)
        if batch and length * (len(batch) + 1) > max_tokens:
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def _padded(policy: Policy, items: Sequence[Tokenized]) -> tuple[torch.Tensor, torch.Tensor]:
    rows = [list(item.prompt_ids + item.response_ids) for item in items]
    width = max(len(row) for row in rows)
    pad = policy.tokenizer.pad_token_id if policy.tokenizer.pad_token_id is not None else 0
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return ids.to(policy.device), mask.to(policy.device)


def _plain_head(policy: Policy) -> bool:
    config = policy.model.config
    return hasattr(policy.model, "get_decoder") and not any(
        getattr(config, name, None) for name in _LOGIT_TRANSFORMS
    )


def _head_entropy(head: Any, hidden: torch.Tensor) -> torch.Tensor:
    parts = [token_entropy(head(chunk)) for chunk in hidden.split(HEAD_CHUNK)]
    return torch.cat(parts) if parts else torch.zeros(0)


@torch.no_grad()
def response_entropies(policy: Policy, items: Sequence[Tokenized]) -> list[torch.Tensor]:
    """Entropy (nats, float32, CPU) of every response token of each of ``items``, in one forward."""
    ids, mask = _padded(policy, items)
    starts = [len(item.prompt_ids) - 1 for item in items]
    spans = [(start, start + len(item.response_ids)) for start, item in zip(starts, items, strict=True)]
    if _plain_head(policy):
        hidden = policy.model.get_decoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        head = policy.model.get_output_embeddings()
        return [_head_entropy(head, hidden[i, a:b]).cpu() for i, (a, b) in enumerate(spans)]
    logits = policy.model(input_ids=ids, attention_mask=mask).logits
    return [token_entropy(logits[i, a:b]).cpu() for i, (a, b) in enumerate(spans)]
