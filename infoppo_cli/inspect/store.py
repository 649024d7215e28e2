"""Resume store: the entropies already computed, one JSON line per response, appended as batches finish.

Entropies depend only on the model and the token ids, not on ``--norm``, ``--gamma`` or the clip
epsilons, so a rerun with other settings, or after an interruption, computes only what is missing.
Each model has its own file under ``OUT/.inspect-cache/``, an append-only log
(:mod:`infoppo_cli.records.jsonl`): a torn last line (a crash mid-write) is dropped and cut off before
the next append.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from infoppo_cli.inspect.entropy import Tokenized
from infoppo_cli.records import JsonlLog

CACHE_DIR = ".inspect-cache"


def item_key(item: Tokenized) -> str:
    """A digest of the prompt and response ids."""
    raw = json.dumps([item.prompt_ids, item.response_ids], separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class EntropyStore:
    """Entropies of one model (named by ``identity``) in ``out_dir``."""

    def __init__(self, out_dir: Path, identity: str) -> None:
        tag = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self.path = Path(out_dir) / CACHE_DIR / f"entropy-{tag}.jsonl"
        other = "another `infoppo inspect` writing to the same --out"
        self._log = JsonlLog(self.path, "entropy entry", other)
        self.saved: dict[str, torch.Tensor] = dict(entry for _, entry in self._log.read(_entry))

    def add(self, keys: list[str], entropies: list[torch.Tensor]) -> None:
        """Append one batch and flush it to disk."""
        self._log.append(
            json.dumps({"key": key, "entropy": [round(float(v), 7) for v in h]})
            for key, h in zip(keys, entropies, strict=True)
        )
        for key, h in zip(keys, entropies, strict=True):
            self.saved[key] = h.float()


def _entry(record: dict[str, Any]) -> tuple[str, torch.Tensor]:
    """One stored line as ``(key, entropies)``; ``ValueError`` for a record that is not an entry."""
    if not isinstance(record.get("key"), str) or not isinstance(record.get("entropy"), list):
        raise ValueError("no text key and list of entropies")
    return record["key"], torch.tensor(record["entropy"], dtype=torch.float32)
