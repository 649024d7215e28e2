"""Opening a ``data prep`` source: a file that is not UTF-8 JSON text is refused saying what it is."""

from __future__ import annotations

import gzip
import json
import time

import pytest
from offline_hub import nothing_cached

from infoppo_cli.data.sources import open_source
from infoppo_cli.errors import UsageError

ROWS = "".join(json.dumps({"prompt": "What is 2+2?", "label": "4"}) + "\n" for _ in range(3))


@pytest.mark.parametrize(
    ("encoding", "name"),
    [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")],
)
def test_a_utf16_or_utf32_file_is_named_as_such(tmp_path, encoding, name):
    path = tmp_path / "rows.jsonl"
    mark = "" if encoding in ("utf-16", "utf-32") else "\ufeff"  # these two codecs write their own
    path.write_bytes((mark + ROWS).encode(encoding))
    with pytest.raises(UsageError) as refused:
        open_source(str(path))
    message = str(refused.value)
    assert f"is {name} text (it starts with a {name} byte-order mark) and must be UTF-8" in message
    assert "parquet" not in message and "compressed" not in message


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (gzip.compress(ROWS.encode(), mtime=0), "it is gzip-compressed"),
        (b"PAR1" + bytes(64), "it is parquet; name it .parquet"),
        ('{"prompt": "caf\xe9", "label": "1"}\n'.encode("latin-1"), "byte 0xe9 at offset 15 is not UTF-8"),
        (b'{"prompt": "a\x00b"}\n', "a binary file, not UTF-8 JSON text (it holds NUL bytes)"),
    ],
)
def test_other_binary_files_are_named_by_what_their_first_bytes_say(tmp_path, content, said):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(content)
    with pytest.raises(UsageError, match="not UTF-8") as refused:
        open_source(str(path))
    assert said in str(refused.value)


def test_a_utf8_file_with_a_bom_is_still_read(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + ROWS.encode())
    assert open_source(str(path)).total == 3


def test_a_hub_dataset_without_network_fails_at_once_as_eval_does(tmp_path, monkeypatch):
    nothing_cached(monkeypatch, tmp_path / "cache")  # the probe fails, nothing is cached
    started = time.monotonic()
    with pytest.raises(UsageError) as refused:
        open_source("BytedTsinghua-SIA/DAPO-Math-17k")
    assert time.monotonic() - started < 10  # no retries with back-off (about 25 s)
    message = str(refused.value)
    assert message.startswith("cannot load BytedTsinghua-SIA/DAPO-Math-17k from the Hugging Face Hub: ")
    assert "the Hub cannot be used (https://huggingface.co does not answer: ConnectError" in message
    assert "pass --source path/to/dapo-math-17k.parquet" in message
