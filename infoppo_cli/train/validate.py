"""What a real launch would trip over, caught while planning (``--dry-run`` included): the data, the
model path, the seed, and ``--set`` values that OpenRLHF's parser accepts but cannot train with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infoppo_cli.components import SETTINGS
from infoppo_cli.data.hub import HUB_MODEL_ADVICE, check_hub_model
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter import flags as openrlhf_flags
from infoppo_cli.records.text import loads
from infoppo_cli.schema import SAMPLES_PER_PROBLEM, SEEDS, Limits
from infoppo_cli.train.request import DEFAULT_SEED

DATA_SUFFIXES = (".jsonl", ".parquet")
_LOCAL_PREFIXES = ("/", "./", "../", "~")


def resolve_seed(cli_seed: int | None, overrides: dict[str, Any], default: int = DEFAULT_SEED) -> int:
    """One seed for the run directory's name, the manifest and ``train.seed``, within ``SEEDS``."""
    given, name = overrides.get("train.seed"), "--seed"
    if given is not None:
        try:
            set_seed = int(str(given))
        except ValueError:
            raise UsageError(f"--set train.seed={given} is not an integer") from None
        if cli_seed is not None and cli_seed != set_seed:
            raise UsageError(
                f"--seed {cli_seed} and --set train.seed={set_seed} disagree; give the seed once"
            )
        cli_seed, name = set_seed, "--set train.seed"
    seed = default if cli_seed is None else cli_seed
    problem = SEEDS.problem(name, seed)
    if problem:
        raise UsageError(problem)
    return seed


def _jsonl_columns(path: Path) -> set[str]:
    with path.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                row = loads(line)
            except (ValueError, UnicodeDecodeError):
                raise UsageError(f"data file {path}: the first row is not JSON") from None
            if not isinstance(row, dict):
                raise UsageError(f"data file {path}: rows must be JSON objects")
            return set(row)
    raise UsageError(f"data file {path} is empty; create it with `infoppo data prep dapo-math-17k`")


def _parquet_columns(path: Path) -> set[str]:
    import pyarrow.parquet as pq  # lazy: heavy, kept off planning

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
    """A model given as a local path (``/``, ``./``, ``../``, ``~``) must exist; a Hub id must be
    downloadable or cached (refused in seconds when the Hub does not answer, ``data.hub``)."""
    if model.startswith(_LOCAL_PREFIXES) and not Path(model).expanduser().exists():
        raise UsageError(f"model path {model} does not exist")
    check_hub_model(model, HUB_MODEL_ADVICE)


def _number(flags: dict[str, Any], key: str) -> float | None:
    value = flags.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--{key} must be a number, got {value!r}") from None


_AT_LEAST_ONE = (
    *(
        f"{role}.{part}"
        for role in ("actor", "critic", "ref", "reward")
        for part in ("num_nodes", "num_gpus_per_node")
    ),
    "rollout.n_samples_per_prompt",
    "rollout.batch_size",
    "rollout.micro_batch_size",
    "rollout.max_new_tokens",
    "rollout.max_tokens_per_gpu",
    "rollout.vllm_generate_batch_size",
    "train.batch_size",
    "train.micro_batch_size",
    "train.max_epochs",
    "train.num_episodes",
    "train.max_tokens_per_gpu",
    "train.async_queue_size",
    "data.max_len",
    "data.max_samples",
    "vllm.num_engines",
    "vllm.tensor_parallel_size",
    "ds.tensor_parallel_size",
    "ds.ring_attn_size",
    "ds.ring_attn_head_stride",
    "ds.zpg",
    "ckpt.max_num",
    "logger.logging_steps",
    "algo.kl.horizon",
    "actor.muon.ns_steps",
    "critic.muon.ns_steps",
)
_POSITIVE = (
    *(f"{role}.{optim}.lr" for role in ("actor", "critic") for optim in ("adam", "muon")),
    "actor.adam.eps",
    "critic.adam.eps",
    "rollout.temperature",  # OpenRLHF divides the logits by it
    "algo.advantage.is_correction_threshold",
)
_NON_NEGATIVE = (
    "eval.temperature",  # 0: greedy
    "actor.eps_clip",
    "actor.eps_clip_low_high",
    "critic.value_clip",
    "actor.adam.weight_decay",
    "critic.adam.weight_decay",
    "actor.max_norm",
    "critic.max_norm",
    "actor.aux_loss_coef",
    "algo.kl.init_coef",
    "reward.overlong_buffer_len",
    "reward.overlong_penalty_factor",
    "ckpt.max_mem",
    "ds.lora.rank",
    "data.dataloader_num_workers",
    "data.max_images_per_prompt",
)
_RATIOS = (  # [0, 1]
    "actor.lr_warmup_ratio",
    "critic.lr_warmup_ratio",
    "actor.min_lr_ratio",
    "critic.min_lr_ratio",
    "train.ema_beta",
)
_BELOW_ONE = ("actor.adam.betas", "critic.adam.betas", "actor.muon.momentum", "critic.muon.momentum")
_BELOW_ONE += ("ds.lora.dropout",)  # [0, 1)
_UP_TO_ONE = ("rollout.top_p", "vllm.gpu_memory_utilization")  # (0, 1]
_ORDERED_PAIRS = ("reward.clip_range", "algo.dynamic_filtering_range")
_EVERY_OR_NEVER = ("ckpt.save_steps", "eval.steps")  # OpenRLHF takes -1 as never, else step % N


def _within(limits: Limits) -> tuple[str, Any]:
    """A rule of :func:`_ranges` from the ``Limits`` of the quantity an option of infoppo's also sets."""
    return f"{limits.least} to {limits.most:,}", lambda x: limits.least <= x <= limits.most


DECLARED_FLAGS = {setting.openrlhf: setting for setting in SETTINGS.values() if setting.openrlhf}
"""The OpenRLHF flags that carry an infoppo setting (``algo.advantage.gamma``): checked by the setting's
own declaration, whichever layer of the plan gives them; the tables above hold OpenRLHF's other flags."""


def _ranges() -> dict[str, tuple[str, Any]]:
    """Each flag's allowed range that no infoppo setting declares: its text and its test."""
    rules: dict[str, tuple[str, Any]] = {}
    rules |= dict.fromkeys(_AT_LEAST_ONE, (">= 1", lambda x: x >= 1))
    rules |= dict.fromkeys(_POSITIVE, ("> 0", lambda x: x > 0))
    rules |= dict.fromkeys(_NON_NEGATIVE, (">= 0", lambda x: x >= 0))
    rules |= dict.fromkeys(_RATIOS, ("in [0, 1]", lambda x: 0 <= x <= 1))
    rules |= dict.fromkeys(_BELOW_ONE, ("in [0, 1)", lambda x: 0 <= x < 1))
    rules |= dict.fromkeys(_UP_TO_ONE, ("in (0, 1]", lambda x: 0 < x <= 1))
    rules |= dict.fromkeys(_EVERY_OR_NEVER, ("-1 (never) or >= 1", lambda x: x == -1 or x >= 1))
    rules["eval.n_samples_per_prompt"] = _within(SAMPLES_PER_PROBLEM)  # train's --eval-samples
    rules["actor.dual_clip"] = ("> 1", lambda x: x > 1)  # OpenRLHF's PolicyLoss asserts it
    rules["ds.zero_stage"] = ("0, 1, 2 or 3", lambda x: x in (0, 1, 2, 3))
    return rules


def _values(flags: dict[str, Any], key: str) -> list[float]:
    value = flags.get(key)
    if value is None or value is False:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    try:
        return [float(item) for item in items]
    except (TypeError, ValueError):
        raise UsageError(f"--{key} must be a number, got {value!r}") from None


def _shown(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _check_ranges(flags: dict[str, Any]) -> None:
    """Values no run can mean: a non-finite number, a negative temperature or learning rate, a top_p
    outside (0, 1], a count below one, ..."""
    for key, (allowed, test) in _ranges().items():
        numbers = _values(flags, key)
        if any(not test(x) for x in numbers):
            raise UsageError(f"--{key} must be {allowed}, got {_shown(flags[key])}")
    for key, setting in DECLARED_FLAGS.items():
        for number in _values(flags, key):
            try:
                setting.check(number, f"--{key} ({setting.options[0]})")
            except ValueError as exc:
                raise UsageError(str(exc)) from None
    for key in _ORDERED_PAIRS:
        numbers = _values(flags, key)
        if len(numbers) == 2 and not numbers[0] < numbers[1]:
            raise UsageError(f"--{key} takes LOW HIGH with LOW < HIGH, got {_shown(flags[key])}")
    if len(_values(flags, "algo.advantage.is_correction_threshold")) > 2:
        raise UsageError("--algo.advantage.is_correction_threshold takes HIGH or LOW HIGH")


def _check_types(flags: dict[str, Any]) -> None:
    """Every flag is OpenRLHF's and holds a value its parser converts (a finite number where it
    takes a number), whichever layer of the plan gave it."""
    for key, value in flags.items():
        if value is None or value is False:
            continue  # left out of the command line
        problem = openrlhf_flags.value_problem(key, value)
        if problem:
            raise UsageError(f"--{key} {_shown(value)}: {key} {problem}")


def _count(flags: dict[str, Any], key: str) -> int:
    """An integer flag's value, or OpenRLHF's default when the plan leaves it out."""
    value = flags.get(key)
    if value is None:
        value = openrlhf_flags.openrlhf_parser().get_default(key)
    return int(value) if value is not None else 1


def _check_batches(flags: dict[str, Any]) -> None:
    responses = _count(flags, "rollout.batch_size") * _count(flags, "rollout.n_samples_per_prompt")
    train_batch = _count(flags, "train.batch_size")
    if responses % train_batch:
        raise UsageError(
            f"rollout.batch_size x n_samples_per_prompt = {responses} responses per step is not a "
            f"multiple of train.batch_size {train_batch}"
        )
    gpus = _count(flags, "actor.num_nodes") * _count(flags, "actor.num_gpus_per_node")
    for key in ("ds.ring_attn_size", "ds.tensor_parallel_size"):  # ranks that share one micro-batch
        gpus //= _count(flags, key)
    per_pass = _count(flags, "train.micro_batch_size") * max(gpus, 1)
    if not flags.get("train.dynamic_batch_enable") and train_batch % per_pass:  # packed: not counted
        raise UsageError(
            f"train.batch_size {train_batch} is not a multiple of train.micro_batch_size x data-parallel "
            f"actor GPUs = {per_pass}: set a train.micro_batch_size that divides "
            f"{train_batch // max(gpus, 1) or 1} (--set train.micro_batch_size=N)"
        )
    experience_batches = responses // _count(flags, "rollout.micro_batch_size")
    if experience_batches < gpus:  # upstream asserts it after Ray has started (train_ppo_ray.py)
        raise UsageError(
            f"{responses} responses per step make {experience_batches} experience micro-batch(es) of "
            f"rollout.micro_batch_size, fewer than the {gpus} data-parallel actor workers that share them: "
            f"set rollout.micro_batch_size to at most {responses // gpus} (--set rollout.micro_batch_size=N)"
        )


def check_flags(flags: dict[str, Any]) -> None:
    """Values OpenRLHF's parser accepts but training cannot work with (before anything counts with
    them: the warm-up schedule reads the batch flags as integers)."""
    _check_types(flags)
    _check_ranges(flags)
    _check_batches(flags)
    max_new, max_len = _number(flags, "rollout.max_new_tokens"), _number(flags, "data.max_len")
    if max_new is not None and max_len is not None and max_new >= max_len:
        raise UsageError(
            f"rollout.max_new_tokens {int(max_new)} leaves no room for the prompt in "
            f"data.max_len {int(max_len)}; raise data.max_len with it "
            f"(--set data.max_len=N, N = the longest prompt's tokens + {int(max_new)})"
        )
