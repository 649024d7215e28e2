"""The Hugging Face transformers generation backend: CPU or a single GPU, small models.

Every sample is drawn with its own seeded generator (:class:`PerSampleSampler`), so a sample's text
depends on the run seed, its problem and its index only, never on the batch it lands in: a resumed
run with another ``--batch-size``, or one sharded across engines, draws the same samples.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from infoppo_cli.data.templates import build_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.generation import (
    HF_BATCH_SIZE,
    Completion,
    GenerationRequest,
    SamplingSettings,
    load_tokenizer,
    prompt_token_ids,
    sample_seed,
    stop_token_ids,
    trim_at_stop,
)
from infoppo_cli.eval.hub import loading


class PerSampleSampler:
    """A logits processor that samples each row with its own ``torch.Generator`` and returns logits
    that leave exactly that token (``generate`` then decodes greedily, so it picks it).

    Temperature and top-p are applied with transformers' own warpers first, so the distribution is
    the one ``do_sample=True`` would sample from; only the random stream differs (one per sample).
    """

    def __init__(self, seeds: Sequence[int], sampling: SamplingSettings, device: Any) -> None:
        import torch
        from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

        self.generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]
        warpers = []
        if sampling.temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(sampling.temperature))
        if sampling.top_p < 1.0:
            warpers.append(TopPLogitsWarper(top_p=sampling.top_p))
        self.warpers = LogitsProcessorList(warpers)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        probabilities = torch.softmax(self.warpers(input_ids, scores).float(), dim=-1)
        chosen = torch.cat(
            [
                torch.multinomial(row, 1, generator=generator)
                for row, generator in zip(probabilities, self.generators, strict=True)
            ]
        )
        only_chosen = torch.full_like(scores, float("-inf"))
        return only_chosen.scatter_(1, chosen.unsqueeze(1), 0.0)


class HFBackend:
    """Batched sampling with ``transformers`` ``generate``, one seeded random stream per sample."""

    name = "hf"

    def __init__(self, model: str, batch_size: int = HF_BATCH_SIZE) -> None:
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # the evaluation's own progress bars are enough
        if batch_size < 1:
            raise UsageError(f"--batch-size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.tokenizer = load_tokenizer(model)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        use_bf16 = self.device.type == "cuda" and torch.cuda.is_bf16_supported()
        with loading(f"the model {model}", model):
            self.model = AutoModelForCausalLM.from_pretrained(
                model, dtype=torch.bfloat16 if use_bf16 else torch.float32, attn_implementation="sdpa"
            )
        self.model.to(self.device).eval()
        self.stop_ids = stop_token_ids(self.tokenizer, self.model.generation_config)
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(self.stop_ids)

    def format_prompt(self, problem: str, template: str) -> str:
        return build_prompt(self.tokenizer, problem, template)

    def generation_config(self, sampling: SamplingSettings) -> Any:
        """An explicit ``GenerationConfig``: only the given settings shape the distribution (no top-k,
        no repetition penalty, whatever the checkpoint's defaults say). Decoding is greedy over the
        logits :class:`PerSampleSampler` leaves, which is sampling at ``sampling``'s temperature/top-p."""
        from transformers import GenerationConfig

        return GenerationConfig(
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            typical_p=1.0,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            max_new_tokens=sampling.max_tokens,
            eos_token_id=sorted(self.stop_ids),
            pad_token_id=self.pad_id,
        )

    def generate(
        self, requests: Sequence[GenerationRequest], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        import torch
        from transformers import LogitsProcessorList

        rows = [(request, sample) for request in requests for sample in request.sample_indices]
        token_ids = {request.key: prompt_token_ids(self.tokenizer, request.prompt) for request in requests}
        config = self.generation_config(sampling)
        for start in range(0, len(rows), self.batch_size):
            batch = rows[start : start + self.batch_size]
            processors = LogitsProcessorList()
            if sampling.temperature > 0:
                seeds = [sample_seed(r.seed, r.key, s) for r, s in batch]
                processors.append(PerSampleSampler(seeds, sampling, self.device))
            input_ids, attention_mask = self._left_padded([token_ids[r.key] for r, _ in batch])
            with torch.no_grad():
                output = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    generation_config=config,
                    logits_processor=processors,
                )
            generated = output[:, input_ids.shape[1] :].tolist()
            yield [self._completion(r, s, ids) for (r, s), ids in zip(batch, generated, strict=True)]

    def _left_padded(self, prompts: list[list[int]]) -> tuple[Any, Any]:
        import torch

        width = max(len(ids) for ids in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            if ids:
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention_mask[row, width - len(ids) :] = 1
        return input_ids.to(self.device), attention_mask.to(self.device)

    def _completion(self, request: GenerationRequest, sample: int, ids: list[int]) -> Completion:
        kept, finish_reason = trim_at_stop(ids, self.stop_ids)
        text = self.tokenizer.decode(kept, skip_special_tokens=True)
        return Completion(request.key, sample, text, len(kept), finish_reason)
