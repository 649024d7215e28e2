"""What a real launch would trip over, caught while planning (``--dry-run`` included): the data, the
model path, the seed, and ``--set`` values that OpenRLHF's parser accepts but cannot train with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError

DATA_SUFFIXES = (".jsonl", ".parquet")
_LOCAL_PREFIXES = ("/", "./", "../", "~")


def resolve_seed(cli_seed: int | None, overrides: dict[str, Any], default: int = 42) -> int:
    """One seed for the run directory's name, the manifest and ``train.seed``."""
    given = overrides.get("train.seed")
    if given is not None:
        try:
            set_seed = int(str(given))
        except ValueError:
            raise UsageError(f"--set train.seed={given} is not an integer") from None
        if cli_seed is not None and cli_seed != set_seed:
            raise UsageError(
                f"--seed {cli_seed} and --set train.seed={set_seed} disagree; give the seed once"
            )
        cli_seed = set_seed
    seed = default if cli_seed is None else cli_seed
    if seed < 0:
        raise UsageError(f"--seed must be >= 0, got {seed}")
    return seed


def _jsonl_columns(path: Path) -> set[str]:
    with path.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                raise UsageError(f"data file {path}: the first row is not JSON") from None
            if not isinstance(row, dict):
                raise UsageError(f"data file {path}: rows must be JSON objects")
            return set(row)
    raise UsageError(f"data file {path} is empty; create it with `infoppo data prep dapo-math-17k`")


def _parquet_columns(path: Path) -> set[str]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a file that is not parquet
        raise UsageError(f"data file {path} is not a readable parquet file ({exc})") from None
    if parquet.metadata.num_rows == 0:
        raise UsageError(f"data file {path} has no rows")
    return set(parquet.schema_arrow.names)


def check_local_data(data: str, prompt_key: str, label_key: str) -> None:
    """A local prompt file must be a non-empty JSONL/parquet file with the prompt and label columns."""
    path = Path(data)
    if not path.exists():
        return
    if path.is_dir():
        raise UsageError(f"--data {data} is a directory; pass the JSONL/parquet file itself")
    if path.suffix not in DATA_SUFFIXES:
        raise UsageError(f"--data {data} must be a .jsonl or .parquet file")
    columns = _jsonl_columns(path) if path.suffix == ".jsonl" else _parquet_columns(path)
    missing = [key for key in (prompt_key, label_key) if key not in columns]
    if missing:
        listed = ", ".join(sorted(columns)[:8]) or "none"
        raise UsageError(f"data file {data} lacks the column {missing[0]!r} (it has: {listed})")


def check_model(model: str) -> None:
    """A model given as a local path (``/``, ``./``, ``../``, ``~``) must exist."""
    if model.startswith(_LOCAL_PREFIXES) and not Path(model).expanduser().exists():
        raise UsageError(f"model path {model} does not exist")


def _number(flags: dict[str, Any], key: str) -> float | None:
    value = flags.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--{key} must be a number, got {value!r}") from None


def _check_positive(flags: dict[str, Any]) -> None:
    for key in ("actor.adam.lr", "critic.adam.lr"):
        value = _number(flags, key)
        if value is not None and not value > 0:
            raise UsageError(f"--{key} must be > 0, got {flags[key]}")
    keys = (
        "rollout.n_samples_per_prompt",
        "rollout.batch_size",
        "train.batch_size",
        "train.micro_batch_size",
    )
    for key in (*keys, "rollout.micro_batch_size"):
        value = _number(flags, key)
        if value is not None and value < 1:
            raise UsageError(f"--{key} must be >= 1, got {flags[key]}")


def _check_batches(flags: dict[str, Any]) -> None:
    responses = int(_number(flags, "rollout.batch_size")) * int(
        _number(flags, "rollout.n_samples_per_prompt")
    )
    train_batch = int(_number(flags, "train.batch_size"))
    if responses % train_batch:
        raise UsageError(
            f"rollout.batch_size x n_samples_per_prompt = {responses} responses per step is not a "
            f"multiple of train.batch_size {train_batch}"
        )
    if flags.get("train.dynamic_batch_enable"):
        return  # micro-batches are packed by tokens, not counted
    gpus = int(flags["actor.num_nodes"]) * int(flags["actor.num_gpus_per_node"])
    for key in ("ds.ring_attn_size", "ds.tensor_parallel_size"):  # ranks that share one micro-batch
        gpus //= int(_number(flags, key) or 1)
    per_pass = int(_number(flags, "train.micro_batch_size") or 1) * max(gpus, 1)
    if train_batch % per_pass:
        raise UsageError(
            f"train.batch_size {train_batch} is not a multiple of train.micro_batch_size x data-parallel "
            f"actor GPUs = {per_pass}"
        )


def check_flags(flags: dict[str, Any]) -> None:
    """Values OpenRLHF's parser accepts but training cannot work with."""
    _check_positive(flags)
    _check_batches(flags)
    max_new, max_len = _number(flags, "rollout.max_new_tokens"), _number(flags, "data.max_len")
    if max_new is not None and max_len is not None and max_new >= max_len:
        raise UsageError(
            f"rollout.max_new_tokens {int(max_new)} leaves no room for the prompt in "
            f"data.max_len {int(max_len)}"
        )
