"""Model presets: the shipped ``presets/<name>.toml`` files or a user's file in the same schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.resources import data_dir
from infoppo_cli.train.methods import METHODS_FILE, FlagValues, read_toml

_POSITIVE_INTS = (
    "max_response_tokens",
    "max_prompt_tokens",
    "nodes",
    "gpus_per_node",
    "vllm_tensor_parallel",
)
_REQUIRED = ("summary", "model", *_POSITIVE_INTS, "actor_warmup_steps")
_OPTIONAL = ("openrlhf", "method_overrides")


@dataclass(frozen=True)
class Preset:
    """A model preset: the model, lengths, GPU layout and OpenRLHF flags (``presets/<name>.toml``)."""

    name: str
    summary: str
    model: str
    max_response_tokens: int
    max_prompt_tokens: int
    actor_warmup_steps: int
    nodes: int
    gpus_per_node: int
    vllm_tensor_parallel: int
    openrlhf: FlagValues
    method_overrides: dict[str, FlagValues] = field(default_factory=dict)
    source: str = ""


def preset_names() -> list[str]:
    """Names of the shipped model presets (the TOML files other than methods.toml), sorted."""
    files = data_dir("presets").glob("*.toml")
    return sorted(path.stem for path in files if path.name != METHODS_FILE)


def is_preset_file(name: str) -> bool:
    """A ``--preset`` that ends in ``.toml`` is a user's file; anything else names a shipped preset."""
    return name.endswith(".toml")


def _int(where: str, body: dict[str, Any], key: str, minimum: int) -> int:
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"{where}: {key} must be an integer >= {minimum}, got {value!r}")
    return value


def _tables(where: str, body: dict[str, Any]) -> tuple[FlagValues, dict[str, FlagValues]]:
    flags, overrides = body.get("openrlhf", {}), body.get("method_overrides", {})
    if not isinstance(flags, dict):
        raise UsageError(f"{where}: [openrlhf] must be a table of OpenRLHF flags")
    if not isinstance(overrides, dict) or not all(isinstance(v, dict) for v in overrides.values()):
        raise UsageError(f"{where}: [method_overrides.METHOD] must be tables of OpenRLHF flags")
    return dict(flags), {name: dict(table) for name, table in overrides.items()}


def parse_preset(name: str, body: dict[str, Any], source: str) -> Preset:
    """A :class:`Preset` from a parsed file; a missing, unknown or ill-typed key is a :class:`UsageError`."""
    where = f"preset {source}"
    missing = [key for key in _REQUIRED if key not in body]
    if missing:
        raise UsageError(f"{where} lacks the key {missing[0]!r}")
    unknown = sorted(set(body) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}")
    for key in ("summary", "model"):
        if not isinstance(body[key], str) or not body[key]:
            raise UsageError(f"{where}: {key} must be a non-empty string")
    ints = {key: _int(where, body, key, 1) for key in _POSITIVE_INTS}
    flags, overrides = _tables(where, body)
    return Preset(
        name=name,
        summary=body["summary"],
        model=body["model"],
        actor_warmup_steps=_int(where, body, "actor_warmup_steps", 0),
        openrlhf=flags,
        method_overrides=overrides,
        source=source,
        **ints,
    )


@cache
def _shipped_preset(name: str) -> Preset:
    path = data_dir("presets") / f"{name}.toml"
    return parse_preset(name, read_toml(path, "preset file"), f"presets/{name}.toml")


def preset(name: str) -> Preset:
    """The shipped preset called ``name``, or the user's preset file ``name`` (``*.toml``)."""
    if is_preset_file(name):
        path = Path(name).expanduser()
        return parse_preset(path.stem, read_toml(path, "preset file"), str(path))
    if name not in preset_names():
        hint = " (or a path to a .toml preset file)"
        raise UsageError(f"unknown preset {name!r}; choose one of: {', '.join(preset_names())}{hint}")
    return _shipped_preset(name)
