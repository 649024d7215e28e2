"""Checkpoint rotation for the per-step Hugging Face copies, whole checkpoints or none, and the disk a
run is expected to use.

OpenRLHF 0.11.2 rotates its DeepSpeed checkpoints (``ckpt.path/_actor/<tag>``, at most
``ckpt.max_num``) but never removes the Hugging Face copy it writes beside them with
``ckpt.save_hf`` (``ckpt.path/<tag>_hf``): about 8 GB per save for a 4B model, 0.4 TB over a run.
:func:`rotate_hf_copies` keeps the same number of HF copies as DeepSpeed checkpoints.

DeepSpeed writes a checkpoint's files into ``<tag>/`` and then the tag into ``latest`` (what a resume
loads). A save that fails (a full disk) leaves a partial ``<tag>/``, and one that fails while writing
``latest`` an empty ``latest``: :func:`whole_checkpoint_or_none` removes the partial folder and puts
``latest`` back, and :func:`drop_partial_checkpoints` removes the folders a killed save left past
``latest`` (OpenRLHF's rotation would count them as checkpoints and evict a whole one for them).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from infoppo_cli.atomic import free_bytes, is_disk_full, size_text

_STEP_COPY = re.compile(r"^global_step(\d+)_hf$")
_BEST_COPY = re.compile(r"^best_global_step(\d+)_hf$")
_TAG = re.compile(r"^(?:best_)?global_step(\d+)(?:_hf)?$")
MODEL_DIRS = ("_actor", "_critic")
"""The DeepSpeed checkpoint folders under ``ckpt.path``, each with its own ``latest``."""
LATEST = "latest"

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


def tag_step(name: str) -> int | None:
    """The RL step of a checkpoint folder's name (``global_step3``, ``best_global_step3``, their
    ``_hf`` copies); ``None`` for any other name."""
    match = _TAG.match(name)
    return int(match.group(1)) if match else None


def _latest_step(model_dir: Path) -> int | None:
    """The step ``model_dir/latest`` names when that checkpoint is there, else ``None``."""
    try:
        tag = (model_dir / LATEST).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return tag_step(tag) if tag and (model_dir / tag).is_dir() else None


@contextlib.contextmanager
def whole_checkpoint_or_none(ckpt_path: str | os.PathLike[str], tag: str) -> Iterator[None]:
    """Around the save of checkpoint ``tag`` (every model's, and its HF copy): when it fails, its
    folders are removed and each ``latest`` holds again what it held before, so a resume loads the
    last whole checkpoint; the failure goes on."""
    root = Path(ckpt_path)
    before = {}
    for name in MODEL_DIRS:
        with contextlib.suppress(OSError):
            before[name] = (root / name / LATEST).read_bytes()
    try:
        yield
    except BaseException as exc:
        full = _failed_for_space(exc, root)
        for folder in (*(root / name / tag for name in MODEL_DIRS), root / f"{tag}_hf"):
            shutil.rmtree(folder, ignore_errors=True)
        for name in MODEL_DIRS:  # after the removal, which made room for it on a full disk
            if name in before:
                with contextlib.suppress(OSError):
                    (root / name / LATEST).write_bytes(before[name])
            else:
                _drop_checkpointless(root / name)
        if full:  # said as such, whatever layer raised it (torch's writer hides the errno)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(root / MODEL_DIRS[0] / tag)) from exc
        raise


def _drop_checkpointless(model_dir: Path) -> None:
    """Remove a model folder a failed first save made, unless it holds a checkpoint folder: its
    ``latest`` and DeepSpeed's ``zero_to_fp32.py`` (copied in once a model's save is done) would make
    upstream's resume take the folder for a checkpoint and fail on its missing loop states."""
    with contextlib.suppress(OSError):
        if not holds_checkpoint_folder(model_dir):
            shutil.rmtree(model_dir, ignore_errors=True)


def holds_checkpoint_folder(model_dir: Path) -> bool:
    """Whether ``model_dir`` holds a folder named as a checkpoint (whole or not), besides ``latest`` and
    DeepSpeed's ``zero_to_fp32.py``."""
    return any(tag_step(entry.name) is not None for entry in model_dir.iterdir())


_SPACE_WORDS = ("No space left on device", "Disk quota exceeded")
_WRITER_WORDS = ("file write failed", "unexpected pos")
"""What torch's checkpoint writer says when a write comes up short, without an errno."""


def _failed_for_space(exc: BaseException, root: Path) -> bool:
    """Whether a failed save found its disk full: an ``ENOSPC`` in the chain, those words in the text
    (a Ray task error carries the worker's as text), or torch's writer's short write on a disk with
    less than 1% free."""
    chain: BaseException | None = exc
    while chain is not None:
        if is_disk_full(chain):
            return True
        chain = chain.__cause__ or chain.__context__
    text = str(exc)
    if any(words in text for words in _SPACE_WORDS):
        return True
    if not any(words in text for words in _WRITER_WORDS):
        return False
    try:
        usage = shutil.disk_usage(root)
    except OSError:
        return False
    return usage.free < 0.01 * usage.total


def drop_partial_checkpoints(ckpt_path: str | os.PathLike[str]) -> list[Path]:
    """Remove the checkpoint folders (and HF copies) of steps after the one ``latest`` names: what a
    save that was cut off left (a whole checkpoint is in ``latest`` once written); returns them."""
    root = Path(ckpt_path)
    removed = []
    for name in MODEL_DIRS:
        last = _latest_step(root / name)
        if last is None:  # no whole checkpoint to tell a partial one by
            continue
        removed += _remove_after(root / name, last)
        if name == MODEL_DIRS[0]:  # the actor's HF copies sit beside the model folders
            removed += _remove_after(root, last)
    return removed


def _remove_after(directory: Path, last: int) -> list[Path]:
    doomed = [
        entry
        for entry in directory.iterdir()
        if (step := tag_step(entry.name)) is not None and step > last and entry.is_dir()
    ]
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


def run_disk_bytes(flags: dict, with_critic: bool) -> float | None:
    """:func:`expected_disk_bytes` of a run's flags; ``None`` when the model's size is unknown."""
    params = model_parameters(str(flags["actor.model_name_or_path"]))
    if params is None:
        return None
    return expected_disk_bytes(
        params, int(flags.get("ckpt.max_num", 3)), bool(flags.get("ckpt.save_hf")), with_critic
    )


def disk_use_line(flags: dict, with_critic: bool) -> str:
    """The plan's line: expected peak disk use of the checkpoints, and what it assumes."""
    params = model_parameters(str(flags["actor.model_name_or_path"]))
    max_num, save_hf = int(flags.get("ckpt.max_num", 3)), bool(flags.get("ckpt.save_hf"))
    total = run_disk_bytes(flags, with_critic)
    if params is None or total is None:
        return f"unknown model size; {max_num} checkpoints kept" + (" (+ HF copies)" if save_hf else "")
    kept = f"{max_num} DeepSpeed checkpoint(s)" + (" + HF copies" if save_hf else "")
    size = f"{params / 1e9:.1f}B" if params >= 1e9 else f"{params / 1e6:.1f}M"
    return f"about {size_text(total)} at peak ({kept}, {size} parameters, final model)"


def _folder_bytes(folder: Path) -> int:
    """What the files under ``folder`` hold (0 when it is not there)."""
    total = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += (Path(directory) / name).stat().st_size
    return total


def disk_space_warnings(flags: dict, with_critic: bool, output_dir: str | os.PathLike[str]) -> list[str]:
    """The plan's warning when the output directory's file system has less free space than the run's
    checkpoints are expected to take at peak (less what a resumed run's ``ckpt/`` and ``final/``
    already hold)."""
    total = run_disk_bytes(flags, with_critic)
    free = free_bytes(output_dir)
    if total is None or free is None:
        return []
    held = sum(_folder_bytes(Path(flags[key])) for key in ("ckpt.path", "ckpt.output_dir") if flags.get(key))
    needed = total - held
    if free >= needed:
        return []
    return [
        f"disk: {output_dir} has {size_text(free)} free and this run's checkpoints need about "
        f"{size_text(needed)} more at peak (the plan's checkpoint disk use); a full disk stops the run at "
        "a save: free some space or choose another --output-dir"
    ]
