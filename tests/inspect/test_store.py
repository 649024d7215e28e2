"""The resume store keeps finished responses across runs and survives a torn last line."""

from __future__ import annotations

import pytest
import torch

from infoppo_cli.errors import UsageError
from infoppo_cli.inspect.entropy import Tokenized
from infoppo_cli.inspect.store import EntropyStore, item_key


def test_round_trip_and_torn_line(tmp_path):
    a, b, c = Tokenized((1, 2), (3, 4, 5)), Tokenized((1,), (9,)), Tokenized((2,), (7,))
    store = EntropyStore(tmp_path, "model-a")
    store.add([item_key(a), item_key(b)], [torch.tensor([0.5, 1.25, 3.0]), torch.tensor([2.0])])
    with open(store.path, "a") as handle:
        handle.write('{"key": "torn", "entropy": [1.0, 2')  # a crash mid-write
    again = EntropyStore(tmp_path, "model-a")
    assert set(again.saved) == {item_key(a), item_key(b)}
    assert again.saved[item_key(a)].tolist() == [0.5, 1.25, 3.0]
    assert '"torn"' in store.path.read_text()  # reading writes nothing
    again.add([item_key(c)], [torch.tensor([4.0])])  # the torn line is cut off before the next append
    assert '"torn"' not in store.path.read_text() and store.path.read_text().endswith("\n")
    assert set(EntropyStore(tmp_path, "model-a").saved) == {item_key(a), item_key(b), item_key(c)}
    assert EntropyStore(tmp_path, "model-b").saved == {}  # another model has its own file
    assert item_key(a) != item_key(Tokenized((1, 2, 3), (4, 5)))  # the prompt/response split counts


def test_a_damaged_line_before_the_end_is_an_error_not_a_silent_loss(tmp_path):
    store = EntropyStore(tmp_path, "model-a")
    store.add([item_key(Tokenized((1,), (2,)))], [torch.tensor([0.5])])
    with open(store.path, "a") as handle:
        handle.write('{"key": 3}\n{"key": "k", "entropy": [1.0]}\n')
    with pytest.raises(UsageError, match=r"entropy-.*\.jsonl line 2 is not a valid entropy entry"):
        EntropyStore(tmp_path, "model-a")
