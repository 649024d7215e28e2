"""A fingerprint of the weights an evaluation read, so that no result outlives its weights.

``infoppo eval`` keys its output directory by the model's path, and a path outlives its weights:
``train --resume`` rewrites ``RUN/final`` in place. The fingerprint is a SHA-256 over the weight files'
names and contents. Hashing a 30 GB model takes minutes, so it is computed once per set of weight
files and cached beside them (``.infoppo-weights.json``) with each file's size and modification time;
any change to either, as a new save makes, computes it again. A Hub id has no local files to hash
here; its results are tied to the id (and its cached revision) as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from infoppo_cli.atomic import atomic_write_json

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
CACHE_FILE = ".infoppo-weights.json"
SHORT = 12
_CHUNK = 1 << 22


def _weight_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES)


def _stamps(files: list[Path]) -> dict[str, list[int]]:
    return {p.name: [p.stat().st_size, p.stat().st_mtime_ns] for p in files}


def _digest(files: list[Path]) -> str:
    hasher = hashlib.sha256()
    for path in files:
        hasher.update(path.name.encode("utf-8") + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(_CHUNK), b""):
                hasher.update(block)
    return f"sha256:{hasher.hexdigest()}"


def weights_fingerprint(model: str | None) -> str | None:
    """``sha256:<hex>`` of a local model directory's weight files (cached beside them); ``None`` for a
    Hub id or a directory without weight files."""
    if not model:
        return None
    directory = Path(model).expanduser()
    if not directory.is_dir():
        return None
    files = _weight_files(directory)
    if not files:
        return None
    stamps, cache = _stamps(files), directory / CACHE_FILE
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("files") == stamps and str(cached.get("sha256", "")).startswith("sha256:"):
            return str(cached["sha256"])
    except (OSError, ValueError, AttributeError):
        pass  # no cache yet, or a damaged one: compute
    digest = _digest(files)
    with contextlib.suppress(OSError):  # a read-only model directory: computed again next time
        atomic_write_json(cache, {"sha256": digest, "files": stamps})
    return digest


def short(fingerprint: str | None) -> str:
    """The fingerprint's short form shown beside scores (``-`` when there is none)."""
    return fingerprint.split(":", 1)[-1][:SHORT] if fingerprint else "-"
