"""Checkpoint rotation for the per-step Hugging Face copies, and the disk a run is expected to use.

OpenRLHF 0.11.2 rotates its DeepSpeed checkpoints (``ckpt.path/_actor/<tag>``, at most
``ckpt.max_num``) but never removes the Hugging Face copy it writes beside them with
``ckpt.save_hf`` (``ckpt.path/<tag>_hf``): about 8 GB per save for a 4B model, 0.4 TB over a run.
:func:`rotate_hf_copies` keeps the same number of HF copies as DeepSpeed checkpoints.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

_STEP_COPY = re.compile(r"^global_step(\d+)_hf$")
_BEST_COPY = re.compile(r"^best_global_step(\d+)_hf$")

BYTES_PER_PARAM_HF = 2
"""A bf16 Hugging Face copy (``ckpt.save_hf``, and ``final/``)."""
BYTES_PER_PARAM_DEEPSPEED = 14
"""A DeepSpeed checkpoint of a bf16 model trained with Adam: bf16 weights (2) + fp32 master weights,
momentum and variance (12), whatever the ZeRO stage (the shards add up to the same)."""


def rotate_hf_copies(ckpt_path: str | Path, tag: str, max_num: int) -> list[Path]:
    """Make room for the HF copy of checkpoint ``tag`` as OpenRLHF makes room for its DeepSpeed
    checkpoint (``DeepspeedStrategy.save_ckpt``: before saving, keep ``max_num - 1`` regular ones;
    a new best replaces the previous best): returns the copies removed."""
    root = Path(ckpt_path)
    if not root.is_dir():
        return []
    best = tag.startswith("best")
    pattern, keep = (_BEST_COPY, 0) if best else (_STEP_COPY, max(int(max_num), 1) - 1)
    copies = []
    for entry in root.iterdir():
        match = pattern.match(entry.name)
        if match and entry.is_dir() and entry.name != f"{tag}_hf":
            copies.append((int(match.group(1)), entry))
    doomed = [entry for _, entry in sorted(copies)[: max(len(copies) - keep, 0)]]
    for entry in doomed:
        shutil.rmtree(entry, ignore_errors=True)
    return doomed


def expected_disk_bytes(params: float, max_num: int, save_hf: bool, with_critic: bool) -> float:
    """Peak disk use of a run's checkpoints: ``max_num`` DeepSpeed checkpoints of the actor (and the
    critic), as many HF copies with ``save_hf``, and the final HF model (``ckpt.output_dir``)."""
    per_save = params * BYTES_PER_PARAM_DEEPSPEED * (2 if with_critic else 1)
    if save_hf:
        per_save += params * BYTES_PER_PARAM_HF
    return max(int(max_num), 1) * per_save + params * BYTES_PER_PARAM_HF


_SIZE_IN_NAME = re.compile(r"(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")


def model_parameters(model: str) -> float | None:
    """The model's parameter count: from a local directory's weight files and dtype, else from a
    size in its name (``Qwen3-4B-Base`` -> 4e9); ``None`` when neither tells."""
    import json

    path = Path(model).expanduser()
    if path.is_dir():
        weights = sum(f.stat().st_size for f in path.glob("*.safetensors"))
        try:
            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            config = {}
        dtype = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16")
        if weights:
            return weights / (4 if "32" in dtype else 2)
    match = _SIZE_IN_NAME.search(Path(model).name)
    return float(match.group(1)) * 1e9 if match else None


def disk_use_line(flags: dict, with_critic: bool) -> str:
    """The plan's line: expected peak disk use of the checkpoints, and what it assumes."""
    params = model_parameters(str(flags["actor.model_name_or_path"]))
    max_num, save_hf = int(flags.get("ckpt.max_num", 3)), bool(flags.get("ckpt.save_hf"))
    if params is None:
        return f"unknown model size; {max_num} checkpoints kept" + (" (+ HF copies)" if save_hf else "")
    total = expected_disk_bytes(params, max_num, save_hf, with_critic)
    kept = f"{max_num} DeepSpeed checkpoint(s)" + (" + HF copies" if save_hf else "")
    size = f"{params / 1e9:.1f}B" if params >= 1e9 else f"{params / 1e6:.1f}M"
    return f"about {_bytes(total)} at peak ({kept}, {size} parameters, final model)"


def _bytes(count: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if count >= scale:
            return f"{count / scale:,.0f} {unit}"
    return f"{count / 1e3:,.0f} kB"
