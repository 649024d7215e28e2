"""A byte-level BPE tokenizer trained here, on the task's own text, with Qwen's chat tokens.

Digits are split one per token before BPE runs (as Qwen's tokenizers do), so a number is spelled digit
by digit and sums can be learnt position by position. DAPO's instruction and closing reminder are each
one (ordinary, not special) token: every prompt carries them word for word, and as two tokens instead
of ~60 they cost a tiny model nothing to read, so training and sampling are several times cheaper.
The special tokens and the ChatML template are Qwen's: training applies the chat template, so the model
reads ``<|im_start|>user\\n{prompt}<|im_end|>\\n<|im_start|>assistant\\n`` and ends its turn with
``<|im_end|>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

END_OF_TEXT = "<|endoftext|>"
TURN_START = "<|im_start|>"
TURN_END = "<|im_end|>"
"""The end of an assistant turn: the tokenizer's and the model's eos."""
PAD = "<|pad|>"
SPECIAL_TOKENS = (END_OF_TEXT, TURN_START, TURN_END, PAD)

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""ChatML, as Qwen ships it, for one conversation without a system prompt."""


def train_tokenizer(texts: Iterable[str], vocab_size: int, phrases: Sequence[str] = ()) -> Any:
    """A ``PreTrainedTokenizerFast`` whose BPE merges are learnt from ``texts`` (about ``vocab_size``
    tokens), plus each of ``phrases`` as one token; eos ``<|im_end|>``, pad ``<|pad|>``, no bos, and
    the ChatML template."""
    from tokenizers import (  # lazy: heavy, kept off planning
        AddedToken,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast  # lazy: heavy, kept off planning

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    # Not special: decoding with skip_special_tokens must give the prompt text back whole.
    tokenizer.add_tokens([AddedToken(phrase, normalized=False, special=False) for phrase in phrases])
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=TURN_END,
        pad_token=PAD,
        bos_token=None,
        unk_token=None,
        padding_side="left",  # generation pads on the left; training pads explicitly
    )
    wrapped.chat_template = CHAT_TEMPLATE
    return wrapped
