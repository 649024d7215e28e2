"""A tiny ``Qwen3ForCausalLM`` and the short supervised pass that warm-starts it on the teacher.

The model is Qwen3's architecture at toy size (about 0.8M parameters, four layers), small enough to
train and sample on two CPU cores in seconds. The supervised pass shows it chat-formatted prompts and
the teacher's responses (:mod:`infoppo_cli.tasks.teacher`), with the loss on the response tokens and
the end-of-turn token only, a fresh teacher response for every draw of a problem.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from infoppo_cli.data.templates import build_prompt

IGNORE = -100
"""The label that keeps a position out of the loss (prompt and padding)."""


class Teacher(Protocol):
    """What a task's teacher does: write one response to a problem, slipping unless ``exact``."""

    def respond(self, problem: Any, rng: random.Random, exact: bool = False) -> str: ...


@dataclass(frozen=True)
class ModelSpec:
    """The tiny model's shape (Qwen3's configuration fields) and the seed of its initial weights."""

    hidden_size: int = 128
    intermediate_size: int = 384
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int = 32
    max_position_embeddings: int = 512
    vocab_size: int = 400
    """The BPE vocabulary asked of the tokenizer trainer (it may learn fewer merges)."""
    seed: int = 0

    def recipe(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class WarmStartSpec:
    """The supervised pass: optimiser steps, batch size, the learning rate's schedule (linear warm-up,
    constant at the peak, cosine decay over the last ``decay_steps``), seed."""

    steps: int = 1300
    clean_steps: int = 1000
    """Steps on exact answers before the teacher's slips are shown: the sums are learnt first."""
    batch_size: int = 32
    learning_rate: float = 1e-3
    warmup_steps: int = 100
    decay_steps: int = 300
    final_lr_fraction: float = 0.1
    seed: int = 0

    def recipe(self) -> dict[str, Any]:
        return asdict(self)


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Run torch on one CPU thread inside the block: a model this small gains nothing from more, and
    on a busy machine several threads are many times slower than one (they wait on each other)."""
    import torch  # lazy: heavy, kept off planning

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def new_model(spec: ModelSpec, tokenizer: Any) -> Any:
    """A freshly initialised ``Qwen3ForCausalLM`` for ``tokenizer`` (tied embeddings, eos = end of turn)."""
    import torch  # lazy: heavy, kept off planning
    from transformers import Qwen3Config, Qwen3ForCausalLM  # lazy: heavy, kept off planning

    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = Qwen3ForCausalLM(config)
    set_generation_defaults(model, tokenizer)
    return model


def set_generation_defaults(model: Any, tokenizer: Any) -> None:
    """Generation stops at ``<|im_end|>`` and pads with ``<|pad|>``; sampling settings are the caller's."""
    from transformers import GenerationConfig  # lazy: heavy, kept off planning

    model.generation_config = GenerationConfig(
        bos_token_id=None, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )


def supervised_pass(
    model: Any,
    tokenizer: Any,
    problems: Sequence[Any],
    teacher: Teacher,
    spec: WarmStartSpec,
    on_step: Callable[[int, float], None] | None = None,
) -> float:
    """Train ``model`` in place on the teacher's responses to ``problems``; returns the last loss.

    ``on_step(step, loss)`` is called after every optimiser step (1-based)."""
    import torch  # lazy: heavy, kept off planning

    prompts = _prompt_ids(tokenizer, problems)
    rng = random.Random(spec.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, betas=(0.9, 0.98))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: _lr_factor(step, spec))
    model.train()
    loss_value = math.nan
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        for step in range(1, spec.steps + 1):
            picks = [rng.randrange(len(problems)) for _ in range(spec.batch_size)]
            exact = step <= spec.clean_steps
            replies = [teacher.respond(problems[i], rng, exact) + tokenizer.eos_token for i in picks]
            reply_ids = tokenizer(replies, add_special_tokens=False)["input_ids"]
            batch = _batch([prompts[i] for i in picks], reply_ids, tokenizer.pad_token_id)
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            loss_value = float(loss.detach())
            if on_step is not None:
                on_step(step, loss_value)
    model.eval()
    return loss_value


def _prompt_ids(tokenizer: Any, problems: Sequence[Any]) -> list[list[int]]:
    texts = [build_prompt(tokenizer, problem.text, "dapo") for problem in problems]
    return tokenizer(texts, add_special_tokens=False)["input_ids"]


def _lr_factor(step: int, spec: WarmStartSpec) -> float:
    """Linear warm-up, the peak held (a tiny model learns sums suddenly, after a long plateau, and
    only while the rate is high), then a cosine down to ``final_lr_fraction`` of the peak."""
    if step < spec.warmup_steps:
        return (step + 1) / spec.warmup_steps
    decay_from = spec.steps - spec.decay_steps
    if step < decay_from:
        return 1.0
    progress = min(1.0, (step - decay_from) / max(1, spec.decay_steps))
    floor = spec.final_lr_fraction
    return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def _batch(prompts: list[list[int]], replies: list[list[int]], pad_id: int) -> dict[str, Any]:
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` (only the replies are learnt)."""
    import torch  # lazy: heavy, kept off planning

    length = max(len(p) + len(r) for p, r in zip(prompts, replies, strict=True))
    input_ids = torch.full((len(prompts), length), pad_id, dtype=torch.long)
    labels = torch.full((len(prompts), length), IGNORE, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), length), dtype=torch.long)
    for row, (prompt, reply) in enumerate(zip(prompts, replies, strict=True)):
        end = len(prompt) + len(reply)
        input_ids[row, :end] = torch.tensor(prompt + reply)
        labels[row, len(prompt) : end] = torch.tensor(reply)
        attention_mask[row, :end] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}
