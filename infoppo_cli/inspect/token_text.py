"""How one token reads on its own: its decoded text, or, for a token that holds only part of a
character (a byte-level BPE splits a CJK character or an emoji over several tokens), its bytes.

Decoding such a token alone gives the replacement character ``�``; every one of them would then read
the same, and ``top_tokens.csv`` and Figure 2 would pool unrelated tokens into one row. Shown by its
bytes (``\\xe6\\xb1``) each stays itself, and the text of whole characters is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

REPLACEMENT = "\ufffd"
_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
"""A SentencePiece byte-fallback piece (Llama, Mistral): one raw byte."""


@cache
def byte_level_alphabet() -> dict[str, int]:
    """The byte each character of a GPT-2-style byte-level BPE vocabulary stands for.

    Bytes that are printable Latin-1 characters stand for themselves; the other 68 bytes (controls,
    space, soft hyphen, ...) are written as the characters from U+0100 on, in byte order.
    """
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    written = {byte: chr(byte) for byte in printable}
    shifted = (byte for byte in range(256) if byte not in written)
    written.update({byte: chr(0x100 + n) for n, byte in enumerate(shifted)})
    return {char: byte for byte, char in written.items()}


def piece_bytes(piece: str | None) -> bytes | None:
    """The raw bytes a vocabulary piece stands for, when the tokenizer writes pieces as bytes."""
    if not piece:
        return None
    single = _BYTE_PIECE.match(piece)
    if single:
        return bytes([int(single.group(1), 16)])
    alphabet = byte_level_alphabet()
    if all(char in alphabet for char in piece):
        return bytes(alphabet[char] for char in piece)
    return None


def shown_bytes(raw: bytes) -> str:
    """Whole characters as text, the bytes of a partial one as ``\\xNN``."""
    return raw.decode("utf-8", errors="backslashreplace")


def token_text(tokenizer: Any, token_id: int) -> str:
    """The text of ``token_id`` alone, with a partial character shown by its bytes."""
    text = tokenizer.decode([token_id])
    if REPLACEMENT not in text:
        return text
    raw = piece_bytes(tokenizer.convert_ids_to_tokens(token_id))
    if raw is None:
        return f"{text}[{token_id}]"  # bytes unknown: at least keep unrelated tokens apart
    return shown_bytes(raw)


def token_decoder(tokenizer: Any) -> Callable[[Sequence[int]], list[str]]:
    """``decode(ids)`` -> each token's :func:`token_text`, every id decoded once."""
    texts: dict[int, str] = {}

    def decode(ids: Sequence[int]) -> list[str]:
        for token_id in ids:
            if token_id not in texts:
                texts[token_id] = token_text(tokenizer, token_id)
        return [texts[token_id] for token_id in ids]

    return decode
