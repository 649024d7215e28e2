"""The Hugging Face transformers generation backend: CPU or a single GPU, small models.

Every sample is drawn with its own seeded random stream (the transformers sampler's per-row streams,
:mod:`infoppo_cli.data.sampler`), so a sample's text depends on the run seed, its problem and its index
only, never on the batch it lands in: a resumed run with another ``--batch-size``, or one sharded across
engines, draws the same samples.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from infoppo_cli.data.hub import loading
from infoppo_cli.data.sampler import Sampled, Sampling, pad_token_id, sample_batch, stop_token_ids
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
)


class HFBackend:
    """Batched sampling with ``transformers`` ``generate``, one seeded random stream per sample."""

    name = "hf"

    def __init__(self, model: str, batch_size: int = HF_BATCH_SIZE) -> None:
        import torch  # lazy: only for the hf backend
        from transformers import AutoModelForCausalLM  # lazy: only for the hf backend
        from transformers.utils import logging as hf_logging  # lazy: only for the hf backend

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
        self.pad_id = pad_token_id(self.tokenizer, self.stop_ids)

    def format_prompt(self, problem: str, template: str) -> str:
        return build_prompt(self.tokenizer, problem, template)

    def sampling(self, settings: SamplingSettings, seeds: Sequence[int]) -> Sampling:
        """The sampler's settings for one batch of samples, each drawn from its own seed's stream."""
        return Sampling(
            max_new_tokens=settings.max_tokens,
            stop_ids=frozenset(self.stop_ids),
            pad_id=self.pad_id,
            temperature=settings.temperature,
            top_p=settings.top_p,
            seeds=tuple(seeds),
        )

    def generate(
        self, requests: Sequence[GenerationRequest], sampling: SamplingSettings
    ) -> Iterator[list[Completion]]:
        rows = [(request, sample) for request in requests for sample in request.sample_indices]
        token_ids = {request.key: prompt_token_ids(self.tokenizer, request.prompt) for request in requests}
        for start in range(0, len(rows), self.batch_size):
            batch = rows[start : start + self.batch_size]
            seeds = [sample_seed(r.seed, r.key, s) for r, s in batch]
            prompts = [token_ids[r.key] for r, _ in batch]
            drawn = sample_batch(self.model, prompts, self.sampling(sampling, seeds), self.device)
            yield [self._completion(r, s, one) for (r, s), one in zip(batch, drawn, strict=True)]

    def _completion(self, request: GenerationRequest, sample: int, drawn: Sampled) -> Completion:
        text = self.tokenizer.decode(drawn.token_ids, skip_special_tokens=True)
        return Completion(request.key, sample, text, len(drawn.token_ids), drawn.finish_reason)
