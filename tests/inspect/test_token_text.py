"""A token that holds part of a character reads as its bytes, so unrelated tokens never share a row."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tiny_model import _build_tokenizer

from infoppo_cli.inspect.token_text import byte_level_alphabet, piece_bytes, shown_bytes, token_decoder


@pytest.fixture(scope="module")
def tokenizer():
    return _build_tokenizer()


def test_the_alphabet_is_the_byte_level_bpe_one():
    from tokenizers import pre_tokenizers

    alphabet = byte_level_alphabet()
    assert set(alphabet) == set(pre_tokenizers.ByteLevel.alphabet())
    assert sorted(alphabet.values()) == list(range(256))
    assert alphabet["Ġ"] == ord(" ") and alphabet["a"] == ord("a")


def test_split_characters_show_their_bytes_and_stay_apart(tokenizer):
    ids = tokenizer("求 1 é", add_special_tokens=False)["input_ids"]
    assert all(tokenizer.decode([i]) == "\ufffd" for i in ids[:3])  # what a plain decode gives
    texts = token_decoder(tokenizer)(ids)
    assert texts[:3] == ["\\xe6", "\\xb1", "\\x82"]  # 求 is e6 b1 82 in UTF-8
    assert "\ufffd" not in "".join(texts) and " 1" in texts
    assert len(set(texts[:3])) == 3


def test_whole_characters_and_ascii_read_as_text(tokenizer):
    ids = tokenizer("The answer is 42", add_special_tokens=False)["input_ids"]
    assert "".join(token_decoder(tokenizer)(ids)) == "The answer is 42"


def test_sentencepiece_byte_pieces_and_unknown_pieces():
    assert piece_bytes("<0xE6>") == b"\xe6"
    assert piece_bytes("▁word") is None and piece_bytes(None) is None


@given(st.text(min_size=1, max_size=20))
def test_whole_text_round_trips_through_its_bytes(text):
    written = {byte: char for char, byte in byte_level_alphabet().items()}
    piece = "".join(written[b] for b in text.encode("utf-8"))
    assert shown_bytes(piece_bytes(piece)) == text
