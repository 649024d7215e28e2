"""Model presets and training methods, read from the TOML files in ``presets/``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.resources import data_dir

METHODS_FILE = "methods.toml"

FlagValues = dict[str, Any]
"""OpenRLHF flags by dotted name (``"algo.advantage.gamma"``) with TOML values."""


@dataclass(frozen=True)
class Method:
    """A training method: OpenRLHF flags plus infoppo's own settings (``presets/methods.toml``)."""

    name: str
    summary: str
    openrlhf: FlagValues
    infotime: dict[str, Any] = field(default_factory=dict)

    @property
    def uses_critic(self) -> bool:
        """Whether this method trains a critic (GAE); DAPO-style methods use group baselines."""
        return self.openrlhf.get("algo.advantage.estimator") == "gae"


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


def _read_toml(name: str) -> dict[str, Any]:
    path = data_dir("presets") / name
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"preset file {path} is not valid TOML: {exc}") from None


@cache
def methods() -> dict[str, Method]:
    """Every training method, by name."""
    table = _read_toml(METHODS_FILE)
    return {
        name: Method(name, body["summary"], dict(body["openrlhf"]), dict(body.get("infotime", {})))
        for name, body in table.items()
    }


def preset_names() -> list[str]:
    """Names of the model presets (the TOML files other than methods.toml), sorted."""
    files = data_dir("presets").glob("*.toml")
    return sorted(path.stem for path in files if path.name != METHODS_FILE)


def method(name: str) -> Method:
    """The method called ``name``; an unknown name is a :class:`UsageError` listing the choices."""
    known = methods()
    if name not in known:
        raise UsageError(f"unknown method {name!r}; choose one of: {', '.join(known)}")
    return known[name]


@cache
def preset(name: str) -> Preset:
    """The model preset called ``name``; an unknown name is a :class:`UsageError` listing the choices."""
    if name not in preset_names():
        raise UsageError(f"unknown preset {name!r}; choose one of: {', '.join(preset_names())}")
    body = _read_toml(f"{name}.toml")
    try:
        return Preset(
            name=name,
            summary=body["summary"],
            model=body["model"],
            max_response_tokens=int(body["max_response_tokens"]),
            max_prompt_tokens=int(body["max_prompt_tokens"]),
            actor_warmup_steps=int(body["actor_warmup_steps"]),
            nodes=int(body["nodes"]),
            gpus_per_node=int(body["gpus_per_node"]),
            vllm_tensor_parallel=int(body["vllm_tensor_parallel"]),
            openrlhf=dict(body.get("openrlhf", {})),
            method_overrides={k: dict(v) for k, v in body.get("method_overrides", {}).items()},
        )
    except KeyError as exc:
        raise UsageError(f"preset {name!r} lacks the key {exc.args[0]!r}") from None
