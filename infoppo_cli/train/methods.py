"""Training methods built from components, read from ``presets/methods.toml`` or a user's file.

A method names one choice per component; the OpenRLHF adapter picks its behaviour from these
parts, never from the method's name:

* ``advantage``: ``gae`` (OpenRLHF's token-time GAE), ``info_time_gae`` (the paper's information-time
  GAE, critic as for ``gae``) or ``group_norm`` (GRPO/DAPO group-normalised rewards, no critic);
* ``clip``: ``fixed`` (OpenRLHF's ``actor.eps_clip_low_high``) or ``adaptive`` (the paper's
  entropy-adaptive bounds);
* ``token_mask``: ``all`` or ``top_entropy`` (DAPO-FT: the loss keeps the highest-entropy tokens).

``extends = "other"`` starts from another method's parts, flags and settings.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.infotime import NORM_MODES, validate_hyperparameters
from infoppo_cli.resources import data_dir

METHODS_FILE = "methods.toml"
ADVANTAGES = ("gae", "info_time_gae", "group_norm")
CLIPS = ("fixed", "adaptive")
TOKEN_MASKS = ("all", "top_entropy")
# OpenRLHF's estimator for each advantage component; information-time GAE replaces the body of
# OpenRLHF's GAE (openrlhf_adapter/experience_maker.py), so it runs under the ``gae`` estimator.
ESTIMATOR = {"gae": "gae", "info_time_gae": "gae", "group_norm": "group_norm"}
COMPONENT_CHOICES = {"advantage": ADVANTAGES, "clip": CLIPS, "token_mask": TOKEN_MASKS}
SETTINGS = ("eps_low_info", "eps_high_info", "norm", "top_entropy_frac")
"""infoppo's own per-method settings (``[NAME.infotime]``)."""
_KEYS = {"summary", "extends", "openrlhf", "infotime", *COMPONENT_CHOICES}

FlagValues = dict[str, Any]
"""OpenRLHF flags by dotted name (``"algo.advantage.gamma"``) with TOML values."""


@dataclass(frozen=True)
class Method:
    """A training method: its components, OpenRLHF flags and infoppo settings, and where it came from."""

    name: str
    summary: str
    advantage: str
    clip: str
    token_mask: str
    openrlhf: FlagValues
    infotime: dict[str, Any] = field(default_factory=dict)
    source: str = f"presets/{METHODS_FILE}"

    @property
    def uses_critic(self) -> bool:
        """Whether this method trains a critic (GAE in token or information time)."""
        return self.advantage != "group_norm"

    @property
    def uses_rho(self) -> bool:
        """Whether the information density rho is computed (for its GAE or its clip bounds)."""
        return self.advantage == "info_time_gae" or self.clip == "adaptive"

    def components(self) -> dict[str, str]:
        """The three parts, as the adapter's settings carry them."""
        return {"advantage": self.advantage, "clip": self.clip, "token_mask": self.token_mask}

    def all_openrlhf(self) -> FlagValues:
        """The method's OpenRLHF flags, led by the estimator its advantage component implies."""
        return {"algo.advantage.estimator": ESTIMATOR[self.advantage], **self.openrlhf}


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML file as a dict; a missing or malformed file is a one-line :class:`UsageError`."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise UsageError(f"{what} {path} not found") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory, not a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path} is not valid TOML: {exc}") from None


def _check_settings(where: str, settings: dict[str, Any]) -> None:
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise UsageError(f"{where}: unknown infotime setting {unknown[0]!r}; known: {', '.join(SETTINGS)}")
    try:
        validate_hyperparameters(
            eps_low=settings.get("eps_low_info"),
            eps_high=settings.get("eps_high_info"),
            top_frac=settings.get("top_entropy_frac"),
        )
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{where}: {exc}") from None
    if "norm" in settings and settings["norm"] not in NORM_MODES:
        raise UsageError(
            f"{where}: unknown norm {settings['norm']!r}; choose one of: {', '.join(NORM_MODES)}"
        )


def _table(where: str, body: dict[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key, {})
    if not isinstance(value, dict):
        raise UsageError(f"{where}: [{key}] must be a table")
    return dict(value)


def _resolve(name: str, table: dict[str, Any], base: dict[str, Method], source: str, seen=()) -> Method:
    where = f"method {name!r} in {source}"
    body = table[name]
    if not isinstance(body, dict):
        raise UsageError(f"{where} must be a table")
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(sorted(_KEYS))}")
    parent = body.get("extends")
    if parent is not None:
        if parent in seen or parent == name:
            raise UsageError(f"{where}: 'extends' makes a cycle through {parent!r}")
        if parent in table:
            inherited = _resolve(parent, table, base, source, (*seen, name))
        elif parent in base:
            inherited = base[parent]
        else:
            raise UsageError(f"{where} extends unknown method {parent!r}")
        parts = inherited.components()
        flags, settings = dict(inherited.openrlhf), dict(inherited.infotime)
    else:
        parts, flags, settings = {}, {}, {}
    for component, choices in COMPONENT_CHOICES.items():
        value = body.get(component, parts.get(component))
        if value is None:
            raise UsageError(f"{where} lacks the key {component!r} ({' | '.join(choices)})")
        if value not in choices:
            raise UsageError(f"{where}: {component} = {value!r}; choose one of: {', '.join(choices)}")
        parts[component] = value
    if "summary" not in body or not isinstance(body["summary"], str):
        raise UsageError(f"{where} lacks the key 'summary' (a one-line description)")
    flags.update(_table(where, body, "openrlhf"))
    if "algo.advantage.estimator" in flags:
        raise UsageError(f"{where}: the estimator follows from 'advantage'; drop algo.advantage.estimator")
    settings.update(_table(where, body, "infotime"))
    _check_settings(where, settings)
    return Method(name, body["summary"], **parts, openrlhf=flags, infotime=settings, source=source)


def parse_methods(
    table: dict[str, Any], source: str, base: dict[str, Method] | None = None
) -> dict[str, Method]:
    """Every method of one methods file; ``base`` holds methods it may extend but not redefine."""
    base = base or {}
    clash = [name for name in table if name in base]
    if clash:
        raise UsageError(f"method {clash[0]!r} in {source} is already defined in {base[clash[0]].source}")
    return {name: _resolve(name, table, base, source) for name in table}


@cache
def shipped_methods() -> dict[str, Method]:
    """The methods in ``presets/methods.toml``, by name."""
    path = data_dir("presets") / METHODS_FILE
    return parse_methods(read_toml(path, "methods file"), f"presets/{METHODS_FILE}")


def methods(methods_file: str | None = None) -> dict[str, Method]:
    """Every training method by name: the shipped ones, then those of ``methods_file`` (a user's
    TOML file in the same schema, whose methods may extend the shipped ones)."""
    shipped = shipped_methods()
    if methods_file is None:
        return dict(shipped)
    path = Path(methods_file).expanduser()
    if path.suffix != ".toml":
        raise UsageError(f"--methods-file {methods_file} must be a .toml file")
    extra = parse_methods(read_toml(path, "methods file"), str(path), shipped)
    return {**shipped, **extra}


def method(name: str, methods_file: str | None = None) -> Method:
    """The method called ``name``; an unknown name is a :class:`UsageError` listing the choices."""
    known = methods(methods_file)
    if name not in known:
        raise UsageError(f"unknown method {name!r}; choose one of: {', '.join(known)}")
    return known[name]
