"""Resume store: the entropies already computed, one JSON line per response, appended as batches finish.

Entropies depend only on the model and the token ids, not on ``--norm``, ``--gamma`` or the clip
epsilons, so a rerun with other settings, or after an interruption, computes only what is missing.
Each model has its own file under ``OUT/.inspect-cache/``; a torn last line (a crash mid-write) is
dropped and cut off before the next append.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch

from infoppo_cli.inspect.entropy import Tokenized

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
        self.saved: dict[str, torch.Tensor] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        good_bytes = 0
        with open(self.path, "rb") as handle:
            lines = handle.readlines()
        for raw in lines:
            parsed = _entry(raw)
            if parsed is None or not raw.endswith(b"\n"):
                break
            self.saved[parsed["key"]] = torch.tensor(parsed["entropy"], dtype=torch.float32)
            good_bytes += len(raw)
        if good_bytes < self.path.stat().st_size:
            os.truncate(self.path, good_bytes)

    def add(self, keys: list[str], entropies: list[torch.Tensor]) -> None:
        """Append one batch and flush it to disk."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps({"key": key, "entropy": [round(float(v), 7) for v in h]}) + "\n"
            for key, h in zip(keys, entropies, strict=True)
        ]
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write("".join(lines))
            handle.flush()
            os.fsync(handle.fileno())
        for key, h in zip(keys, entropies, strict=True):
            self.saved[key] = h.float()


def _entry(raw: bytes) -> dict | None:
    """One stored line parsed, or ``None`` when it is torn or not an entry."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    ok = (
        isinstance(value, dict)
        and isinstance(value.get("key"), str)
        and isinstance(value.get("entropy"), list)
    )
    return value if ok else None
