"""The resume store keeps finished responses across runs and survives a torn last line."""

from __future__ import annotations

import torch

from infoppo_cli.inspect.entropy import Tokenized
from infoppo_cli.inspect.store import EntropyStore, item_key


def test_round_trip_and_torn_line(tmp_path):
    a, b = Tokenized((1, 2), (3, 4, 5)), Tokenized((1,), (9,))
    store = EntropyStore(tmp_path, "model-a")
    store.add([item_key(a), item_key(b)], [torch.tensor([0.5, 1.25, 3.0]), torch.tensor([2.0])])
    with open(store.path, "a") as handle:
        handle.write('{"key": "torn", "entropy": [1.0, 2')  # a crash mid-write
    again = EntropyStore(tmp_path, "model-a")
    assert set(again.saved) == {item_key(a), item_key(b)}
    assert again.saved[item_key(a)].tolist() == [0.5, 1.25, 3.0]
    assert store.path.read_text().endswith("\n")  # the torn line is cut off before the next append
    assert EntropyStore(tmp_path, "model-b").saved == {}  # another model has its own file
    assert item_key(a) != item_key(Tokenized((1, 2, 3), (4, 5)))  # the prompt/response split counts
