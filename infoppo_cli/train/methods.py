"""Training methods built from components, read from ``presets/methods.toml`` or a user's file.

A method names one choice per component (:class:`~infoppo_cli.openrlhf_adapter.settings.Components`:
advantage, clip, token_mask, reward, optimizer); the OpenRLHF adapter picks its behaviour from these
parts, never from the method's name. ``extends = "other"`` starts from another method's parts, flags
and settings. A methods file is checked by :class:`MethodTable` (unknown keys refused) and its
flags by OpenRLHF's parser; every problem is one line naming the file, the table and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model, field_validator

from infoppo_cli.components import KINDS, SETTINGS
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter import flags as openrlhf_flags
from infoppo_cli.openrlhf_adapter.settings import Components
from infoppo_cli.resources import data_dir
from infoppo_cli.schema import checked, file_problem, read_toml

METHODS_FILE = "methods.toml"
IMPLIED_FLAGS = {
    "algo.advantage.estimator": "advantage",
    "actor.adam.betas": "optimizer",
    "critic.adam.betas": "optimizer",
}
"""OpenRLHF flags a method's components set: a method's ``[openrlhf]`` table may not give them."""

FlagValues = dict[str, Any]
"""OpenRLHF flags by dotted name (``"algo.advantage.gamma"``) with TOML values."""

_STRICT = ConfigDict(extra="forbid", strict=True)


def _checked_setting(cls: Any, value: Any, info: Any) -> Any:
    """A declared setting's value once its declaration takes it (``None``: not given here)."""
    problem = None if value is None else SETTINGS[info.field_name].problem(value)
    if problem:
        raise ValueError(problem)  # named by the error's place: [NAME.infotime] KEY
    return value


INFOPPO_SETTINGS = tuple(setting for setting in SETTINGS.values() if setting.openrlhf is None)
"""The method settings of a ``[NAME.infotime]`` table (the others are OpenRLHF flags)."""
InfotimeTable = create_model(
    "InfotimeTable",
    __config__=_STRICT,
    __doc__="``[NAME.infotime]``: infoppo's own settings of a method (None: not given here).",
    __validators__={"declared_range": field_validator(*(s.name for s in INFOPPO_SETTINGS))(_checked_setting)},
    **{
        s.name: ((Literal[s.choices] if s.choices else s.kind) | None, None)  # type: ignore[valid-type]
        for s in INFOPPO_SETTINGS
    },
)


class MethodTable(BaseModel):
    """``[NAME]``: one method of a methods file, as written (components inherited are ``None``)."""

    model_config = _STRICT
    summary: str = Field(min_length=1)
    extends: str | None = None
    advantage: Literal[tuple(KINDS["advantage"])] | None = None
    clip: Literal[tuple(KINDS["clip"])] | None = None
    token_mask: Literal[tuple(KINDS["token_mask"])] | None = None
    reward: Literal[tuple(KINDS["reward"])] | None = None
    optimizer: Literal[tuple(KINDS["optimizer"])] | None = None
    openrlhf: dict[str, Any] = Field(default_factory=dict)
    infotime: InfotimeTable = Field(default_factory=InfotimeTable)


class MethodsFile(RootModel[dict[str, MethodTable]]):
    """A methods file: a ``[NAME]`` table per method."""


def checked_flags(flags: dict[str, Any], source: str, where: tuple[str, ...]) -> dict[str, Any]:
    """``flags`` (a ``[... openrlhf]`` table) once every flag is OpenRLHF's and holds a value its
    parser takes; else a :func:`~infoppo_cli.schema.file_problem` naming the flag."""
    for key, value in flags.items():
        problem = openrlhf_flags.value_problem(key, value)
        if problem:
            shown = openrlhf_flags.REDACTED if key in openrlhf_flags.SECRET_FLAGS else value
            about_the_key = problem.startswith("is not a flag")
            raise file_problem(source, (*where, key), problem, *(() if about_the_key else (shown,)))
    return dict(flags)


@dataclass(frozen=True)
class Method(Components):
    """A training method: its components, OpenRLHF flags and infoppo settings, and where it came from."""

    name: str = ""
    summary: str = ""
    openrlhf: FlagValues = field(default_factory=dict)
    infotime: dict[str, Any] = field(default_factory=dict)
    source: str = f"presets/{METHODS_FILE}"

    def flag(self, key: str) -> Any:
        """What the method's runs give OpenRLHF's ``--KEY``: the method's value, else OpenRLHF's default
        (``flag("algo.advantage.gamma")`` is the method's gamma)."""
        flags = self.all_openrlhf()
        return flags[key] if key in flags else openrlhf_flags.openrlhf_parser().get_default(key)

    def all_openrlhf(self) -> FlagValues:
        """The method's OpenRLHF flags, led by what its components imply: the estimator (from
        ``advantage``) and the AdamW betas (from ``optimizer``)."""
        betas = list(self.adam_betas)
        estimator = self.advantage_estimator.openrlhf_estimator
        implied = {"algo.advantage.estimator": estimator, "actor.adam.betas": betas}
        if self.uses_critic:
            implied["critic.adam.betas"] = betas
        return {**implied, **self.openrlhf}


@dataclass(frozen=True)
class _File:
    """One methods file being read: its tables, the methods they may extend, and its names."""

    tables: dict[str, MethodTable]
    base: dict[str, Method]
    origin: str
    """Where the methods come from (``Method.source``)."""
    source: str
    """How its problems name it (``methods file PATH``)."""


def _parent(name: str, file: _File, seen: tuple[str, ...]) -> Method:
    parent = file.tables[name].extends
    if parent in seen or parent == name:
        raise file_problem(file.source, (name, "extends"), f"makes a cycle through {parent!r}")
    if parent in file.tables:
        return _resolve(parent, file, (*seen, name))
    if parent in file.base:
        return file.base[parent]
    problem = "must name a method of this file or a shipped one"
    raise file_problem(file.source, (name, "extends"), problem, parent)


def _resolve(name: str, file: _File, seen: tuple[str, ...] = ()) -> Method:
    table, source = file.tables[name], file.source
    inherited = _parent(name, file, seen) if table.extends is not None else None
    parts = inherited.components() if inherited else {}
    flags = dict(inherited.openrlhf) if inherited else {}
    settings = dict(inherited.infotime) if inherited else {}
    for component, choices in KINDS.items():
        value = getattr(table, component) or parts.get(component)
        if value is None:
            raise file_problem(source, (name, component), f"is missing ({' | '.join(choices)})")
        parts[component] = value
    for flag, component in IMPLIED_FLAGS.items():
        if flag in table.openrlhf:
            raise file_problem(source, (name, "openrlhf", flag), f"follows from {component!r}; drop it")
    flags.update(checked_flags(table.openrlhf, source, (name, "openrlhf")))
    settings.update(table.infotime.model_dump(exclude_none=True))
    components = Components(**parts)
    for needed in components.needed_settings():
        if needed not in settings:
            listed = ", ".join(parts.values())
            problem = f"is missing (the components {listed} use it)"
            raise file_problem(source, (name, "infotime", needed), problem)
    summary = table.summary
    return Method(**parts, name=name, summary=summary, openrlhf=flags, infotime=settings, source=file.origin)


def parse_methods(
    document: dict[str, Any], origin: str, base: dict[str, Method] | None = None, what: str = ""
) -> dict[str, Method]:
    """Every method of the methods file ``origin`` (its problems start with ``what origin``);
    ``base`` holds methods it may extend but not redefine."""
    base, source = base or {}, f"{what} {origin}".strip()
    tables = checked(MethodsFile, document, source).root
    for name in tables:
        if name in base:
            raise file_problem(source, (name,), f"is already defined in {base[name].source}; rename it")
    file = _File(tables, base, origin, source)
    return {name: _resolve(name, file) for name in tables}


@cache
def shipped_methods() -> dict[str, Method]:
    """The methods in ``presets/methods.toml``, by name."""
    path = data_dir("presets") / METHODS_FILE
    return parse_methods(read_toml(path, ""), f"presets/{METHODS_FILE}")


def methods(methods_file: str | None = None) -> dict[str, Method]:
    """Every training method by name: the shipped ones, then those of ``methods_file`` (a user's
    TOML file in the same schema, whose methods may extend the shipped ones)."""
    shipped = shipped_methods()
    if methods_file is None:
        return dict(shipped)
    path = Path(methods_file).expanduser()
    if path.suffix != ".toml":
        raise UsageError(f"--methods-file {methods_file} must be a .toml file")
    extra = parse_methods(read_toml(path, "methods file"), str(path), shipped, "methods file")
    return {**shipped, **extra}


def method(name: str, methods_file: str | None = None) -> Method:
    """The method called ``name``; an unknown name is a :class:`UsageError` listing the choices."""
    known = methods(methods_file)
    if name not in known:
        raise UsageError(f"unknown method {name!r}; choose one of: {', '.join(known)}")
    return known[name]
