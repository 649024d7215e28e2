"""Sampling the tiny model on held-out problems and grading what it writes with infoppo's grader.

This is how the warm start's accuracy is measured: the transformers sampler
(:mod:`infoppo_cli.data.sampler`, torch's global stream seeded here), the chat template as in training,
temperature 1.0 and top-p 1 (or greedy), and each response judged by :func:`infoppo_cli.grading.grade`
against the problem's gold answer, as the training reward judges it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infoppo_cli.data.sampler import Sampling, sample_batch
from infoppo_cli.data.templates import chat_prompt, render_prompt
from infoppo_cli.grading import grade

MAX_NEW_TOKENS = 16


@dataclass(frozen=True)
class Samples:
    """Generated responses (decoded with their special tokens) and their lengths in tokens."""

    texts: list[str]
    lengths: list[int]
    finished: list[bool]
    """Whether each response ended with ``<|im_end|>`` within the token budget."""
    seconds: float


@dataclass(frozen=True)
class Accuracy:
    """How often sampled responses to held-out problems grade correct."""

    accuracy: float
    responses: int
    mean_tokens: float
    finished_share: float


def sample(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    temperature: float = 1.0,
    seed: int = 0,
    max_new_tokens: int = MAX_NEW_TOKENS,
    batch_size: int = 256,
) -> Samples:
    """One response per prompt (DAPO-templated prompt text, without the chat wrapping); ``temperature``
    0 is greedy. The same seed gives the same responses on the same machine."""
    import torch  # lazy: heavy, kept off planning

    texts: list[str] = []
    lengths: list[int] = []
    finished: list[bool] = []
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    sampling = Sampling(max_new_tokens, frozenset({eos}), pad, temperature=temperature)
    started = time.monotonic()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for start in range(0, len(prompts), batch_size):
            chunk = [chat_prompt(tokenizer, prompt) for prompt in prompts[start : start + batch_size]]
            token_ids = tokenizer(chunk, add_special_tokens=False)["input_ids"]
            for drawn in sample_batch(model, token_ids, sampling):
                ended = drawn.finish_reason == "stop"
                kept = drawn.token_ids if ended else [t for t in drawn.token_ids if t != pad]
                texts.append(tokenizer.decode(kept, skip_special_tokens=False))
                lengths.append(len(kept))
                finished.append(ended)
    return Samples(texts, lengths, finished, time.monotonic() - started)


def heldout_accuracy(
    model: Any,
    tokenizer: Any,
    problems: Sequence[Any],
    temperature: float = 1.0,
    samples_per_problem: int = 1,
    seed: int = 0,
    max_new_tokens: int = MAX_NEW_TOKENS,
) -> Accuracy:
    """The share of sampled responses that :func:`infoppo_cli.grading.grade` marks correct."""
    repeated = [problem for problem in problems for _ in range(samples_per_problem)]
    prompts = [render_prompt(p.text, "dapo") for p in repeated]
    drawn = sample(model, tokenizer, prompts, temperature, seed, max_new_tokens)
    correct = sum(grade(text, str(p.answer)).correct for text, p in zip(drawn.texts, repeated, strict=True))
    count = len(repeated)
    return Accuracy(
        accuracy=correct / count,
        responses=count,
        mean_tokens=sum(drawn.lengths) / count,
        finished_share=sum(drawn.finished) / count,
    )
