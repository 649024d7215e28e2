"""The one transformers sampler: evaluation's transformers backend (``eval/hf_backend.py``), the CPU
rollout engine that stands in for vLLM (``openrlhf_adapter/cpu/rollout.py``) and a task's held-out
accuracy (``tasks/sampling.py``) all draw their responses through :func:`sample_batch`.

Prompts (token ids) are left-padded into one batch, ``generate`` draws up to ``max_new_tokens`` new
tokens for each, and each row is cut after its first stop token, which is kept (as vLLM keeps it):
``stop`` when the row ended so, ``length`` when it ran out of tokens. Temperature 0 is greedy.

Where the randomness comes from is :attr:`Sampling.seeds`' choice:

* one stream per row (``seeds``): each row draws from its own seeded ``torch.Generator``
  (:class:`PerSampleSampler`), so its tokens never depend on the batch it lands in. Decoding is greedy
  over the token drawn, and only these settings shape the distribution (no top-k, no repetition
  penalty, whatever the checkpoint's ``generation_config.json`` says): evaluation's choice;
* torch's global stream (``seeds`` ``None``): transformers' own sampling (``do_sample``), the
  checkpoint's ``generation_config`` filling in what these settings leave unset: the rollout engine's
  and the tasks' choice.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from infoppo_cli.errors import UsageError

FINISH_REASONS: tuple[str, ...] = ("stop", "length")


@dataclass(frozen=True)
class Sampling:
    """How to sample one batch: the budget, when a row ends, and the distribution it is drawn from."""

    max_new_tokens: int
    stop_ids: frozenset[int]
    pad_id: int
    temperature: float = 1.0
    """0: greedy."""
    top_p: float = 1.0
    top_k: int = 0
    """0: no top-k."""
    min_new_tokens: int = 0
    ignore_eos: bool = False
    """Generate ``max_new_tokens`` whatever comes: every row ends ``length``."""
    seeds: tuple[int, ...] | None = None
    """One seed per row (its own random stream, which samples at ``temperature`` and ``top_p`` only), or
    ``None`` for torch's global stream."""
    logprobs: bool = False
    """Also return each generated token's log-probability."""

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


@dataclass(frozen=True)
class Sampled:
    """One generated row: its token ids (the stop token kept), why it ended, and the log-probability of
    each token when asked for."""

    token_ids: list[int]
    finish_reason: str
    logprobs: list[float] | None = None


def stop_token_ids(tokenizer: Any, generation_config: Any = None) -> set[int]:
    """End-of-sequence ids: the tokenizer's eos plus any listed in the model's generation config."""
    ids: set[int] = set()
    for source in (
        getattr(tokenizer, "eos_token_id", None),
        getattr(generation_config, "eos_token_id", None),
    ):
        if isinstance(source, int):
            ids.add(source)
        elif source is not None:
            ids.update(int(i) for i in source)
    if not ids:
        raise UsageError("the tokenizer defines no end-of-sequence token, so generation could never stop")
    return ids


def pad_token_id(tokenizer: Any, stop_ids: Collection[int]) -> int:
    """The tokenizer's padding id, else the smallest stop id (padding comes only after a stop)."""
    pad = tokenizer.pad_token_id
    return pad if pad is not None else min(stop_ids)


def trim_at_stop(token_ids: Sequence[int], stop_ids: Collection[int]) -> tuple[list[int], str]:
    """Cut generated ids after the first stop token (kept, as vLLM keeps it) and say why it ended.

    Everything after the first stop token is padding from batched generation.
    """
    for position, token in enumerate(token_ids):
        if token in stop_ids:
            return list(token_ids[: position + 1]), "stop"
    return list(token_ids), "length"


def left_padded(prompts: Sequence[Sequence[int]], pad_id: int, device: Any = None) -> tuple[Any, Any]:
    """``(input_ids, attention_mask)`` of ``prompts`` padded on the left to the longest one."""
    import torch  # lazy: heavy, kept off planning

    width = max(len(ids) for ids in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, ids in enumerate(prompts):
        if ids:
            input_ids[row, width - len(ids) :] = torch.tensor(list(ids), dtype=torch.long)
            attention_mask[row, width - len(ids) :] = 1
    return input_ids.to(device), attention_mask.to(device)


class PerSampleSampler:
    """A logits processor that samples each row with its own ``torch.Generator`` and returns logits
    that leave exactly that token (``generate`` then decodes greedily, so it picks it).

    Temperature and top-p (``sampling``'s) are applied with transformers' own warpers first, so the
    distribution is the one ``do_sample=True`` would sample from; only the random stream differs (one per
    sample).
    """

    def __init__(self, seeds: Sequence[int], sampling: Any, device: Any) -> None:
        import torch  # lazy: heavy, kept off planning
        from transformers import (  # lazy: heavy, kept off planning
            LogitsProcessorList,
            TemperatureLogitsWarper,
            TopPLogitsWarper,
        )

        self.generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]
        warpers = []
        if sampling.temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(sampling.temperature))
        if sampling.top_p < 1.0:
            warpers.append(TopPLogitsWarper(top_p=sampling.top_p))
        self.warpers = LogitsProcessorList(warpers)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch  # lazy: heavy, kept off planning

        probabilities = torch.softmax(self.warpers(input_ids, scores).float(), dim=-1)
        chosen = torch.cat(
            [
                torch.multinomial(row, 1, generator=generator)
                for row, generator in zip(probabilities, self.generators, strict=True)
            ]
        )
        only_chosen = torch.full_like(scores, float("-inf"))
        return only_chosen.scatter_(1, chosen.unsqueeze(1), 0.0)


def seeded_generation_config(sampling: Sampling) -> Any:
    """The ``GenerationConfig`` of the per-row streams: greedy over the logits :class:`PerSampleSampler`
    leaves, with none of the checkpoint's own warpers or penalties (no top-k, no repetition penalty)."""
    from transformers import GenerationConfig  # lazy: heavy, kept off planning

    return GenerationConfig(
        do_sample=False,
        temperature=None,
        top_p=None,
        top_k=None,
        typical_p=1.0,
        repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        max_new_tokens=sampling.max_new_tokens,
        eos_token_id=sorted(sampling.stop_ids),
        pad_token_id=sampling.pad_id,
    )


def _seeded_arguments(sampling: Sampling, device: Any) -> dict[str, Any]:
    from transformers import LogitsProcessorList  # lazy: heavy, kept off planning

    processors = LogitsProcessorList()
    if not sampling.greedy:
        processors.append(PerSampleSampler(sampling.seeds or (), sampling, device or "cpu"))
    return {"generation_config": seeded_generation_config(sampling), "logits_processor": processors}


def _global_stream_arguments(sampling: Sampling) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "do_sample": not sampling.greedy,
        "max_new_tokens": sampling.max_new_tokens,
        "eos_token_id": None if sampling.ignore_eos else sorted(sampling.stop_ids),
        "pad_token_id": sampling.pad_id,
        "min_new_tokens": sampling.min_new_tokens or None,
    }
    if not sampling.greedy:
        arguments.update(temperature=float(sampling.temperature), top_p=float(sampling.top_p))
        arguments["top_k"] = sampling.top_k if sampling.top_k > 0 else None
    if sampling.logprobs:
        arguments.update(output_scores=True, return_dict_in_generate=True)
    return arguments


def sample_batch(
    model: Any, prompts: Sequence[Sequence[int]], sampling: Sampling, device: Any = None
) -> list[Sampled]:
    """One response to each of ``prompts`` (token ids), drawn as the module says, on ``device``."""
    import torch  # lazy: heavy, kept off planning

    _refuse_what_per_row_streams_ignore(sampling)
    input_ids, attention_mask = left_padded(prompts, sampling.pad_id, device)
    if sampling.seeds is not None:
        arguments = _seeded_arguments(sampling, device)
    else:
        arguments = _global_stream_arguments(sampling)
    with torch.no_grad():
        output = model.generate(input_ids=input_ids, attention_mask=attention_mask, **arguments)
    sequences = output.sequences if sampling.logprobs else output
    scores = torch.stack(output.scores, dim=1).log_softmax(-1) if sampling.logprobs else None
    generated = sequences[:, input_ids.shape[1] :].tolist()
    return [_sampled(ids, scores, row, sampling) for row, ids in enumerate(generated)]


def _refuse_what_per_row_streams_ignore(sampling: Sampling) -> None:
    if sampling.seeds is None:
        return
    ignored = {
        "top_k": sampling.top_k > 0,
        "min_new_tokens": sampling.min_new_tokens > 0,
        "ignore_eos": sampling.ignore_eos,
        "logprobs": sampling.logprobs,
    }
    if any(ignored.values()):
        named = ", ".join(name for name, given in ignored.items() if given)
        raise ValueError(f"per-row random streams sample at a temperature and top-p only, not with {named}")


def _sampled(ids: list[int], scores: Any, row: int, sampling: Sampling) -> Sampled:
    kept, finish_reason = trim_at_stop(ids, () if sampling.ignore_eos else sampling.stop_ids)
    if scores is None:
        return Sampled(kept, finish_reason)
    return Sampled(kept, finish_reason, [float(scores[row, i, token]) for i, token in enumerate(kept)])
