"""The task's tokenizer: one token per digit, DAPO's instruction and reminder as one token each, text
decoded back exactly (with or without special tokens), Qwen's chat tokens and ChatML template."""

from __future__ import annotations

import pytest
from tiny_task import tokenizer_corpus
from transformers import AutoTokenizer

from infoppo_cli.data.templates import DAPO_PREFIX, DAPO_SUFFIX, chat_prompt, render_prompt
from infoppo_cli.tasks.arithmetic import ArithmeticSpec, split_problems
from infoppo_cli.tasks.tokenizer import PAD, TURN_END, train_tokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    train, _ = split_problems(ArithmeticSpec(train_size=300, heldout_size=10))
    trained = train_tokenizer(tokenizer_corpus(train), 400, (DAPO_PREFIX, DAPO_SUFFIX))
    directory = tmp_path_factory.mktemp("tokenizer")
    trained.save_pretrained(directory)
    return AutoTokenizer.from_pretrained(directory)  # as the trainer and the rollout engine load it


def tokens(tokenizer, text):
    return tokenizer.convert_ids_to_tokens(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_numbers_are_spelled_one_digit_per_token(tokenizer):
    assert [t for t in tokens(tokenizer, "Answer: 1089") if t.isdigit()] == ["1", "0", "8", "9"]
    assert all(len(t) == 1 for t in tokens(tokenizer, "What is 97 + 35?") if any(c.isdigit() for c in t))


def test_the_chat_prompt_is_chatml_with_the_template_as_two_tokens(tokenizer):
    prompt = render_prompt("What is 37 + 8?")
    text = chat_prompt(tokenizer, prompt)
    assert text == f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
    pieces = tokens(tokenizer, text)
    assert DAPO_PREFIX in pieces and DAPO_SUFFIX in pieces
    assert len(pieces) < 30


def test_decoding_gives_the_text_back_with_or_without_special_tokens(tokenizer):
    text = chat_prompt(tokenizer, render_prompt("What is 58 - 9?")) + "Answer: 49" + TURN_END
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode(ids, skip_special_tokens=True) == text.replace("<|im_start|>", "").replace(
        TURN_END, ""
    )


def test_end_of_turn_is_eos_and_padding_has_its_own_token(tokenizer):
    assert tokenizer.eos_token == TURN_END and tokenizer.pad_token == PAD
    assert tokenizer.eos_token_id != tokenizer.pad_token_id
    assert tokenizer.bos_token is None
