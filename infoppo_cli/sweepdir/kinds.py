"""Sweep kinds: what each sweep varies, its default grid (InfoPPO's), its arms, how its values are parsed,
checked and written, and its symbol (below ``report/``, which labels their runs, and ``sweep/``).

A sweep compares settings of one hyper-parameter. For ``gamma`` and ``lambda`` every value is run in
two arms: information time (``--method infoppo``) and token time (``--method info-clip``: InfoPPO with
token-time GAE, at the same γ and λ), so the arms differ only in their clock. Where the clocks
coincide (γ = λ = 1) the two arms would run the same program, and the point runs once. A preset may
give its own grid and held value (``[sweeps.gamma]`` in ``presets/tiny-cpu-long.toml``). ``clip`` and
``norm`` vary settings that exist only in information time, so they have the info arm alone.
``components`` varies no value: its arms are the methods that take InfoPPO apart (PPO,
information-time GAE alone, the adaptive clip alone, both), all at the same γ, λ and seeds, which
answers "which half of InfoPPO matters?". ``methods`` is InfoPPO's main comparison: InfoPPO and its
baselines, each with its own recipe, on the same RL-step axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from infoppo_cli.components import NORMS, SETTINGS
from infoppo_cli.errors import UsageError

Value = float | str | tuple[float, ...]
"""One grid value: γ or λ (float), a normalisation mode (str), an (ε_low, ε_high) pair, or ``()`` for a
kind that varies no value (``components``)."""

SWEEP_KINDS: tuple[str, ...] = ("gamma", "lambda", "clip", "norm", "components", "methods")
ARM_METHODS: dict[str, str] = {"info": "infoppo", "token": "info-clip"}
"""The `infoppo train --method` each time arm runs: InfoPPO, and InfoPPO with token-time GAE (the same
adaptive clip, reward and optimizer), so that the arms differ in their clock alone."""
COMPONENT_METHODS: tuple[str, ...] = ("ppo", "info-gae", "info-clip", "infoppo")
"""Neither half of InfoPPO, information-time GAE alone, the adaptive clip alone, both (methods.toml)."""
COMPARED_METHODS: tuple[str, ...] = ("infoppo", "ppo", "dapo", "dapo-ft")
"""InfoPPO's main comparison: InfoPPO against PPO, DAPO and DAPO-FT (methods.toml)."""

SETTING_OF_OPTION = {option: setting for setting in SETTINGS.values() for option in setting.options}
"""The method setting each train option gives (``--lambd``: ``lambd``)."""


@dataclass(frozen=True)
class SweepKind:
    """What one sweep kind varies and its default grid (InfoPPO's ablation grid)."""

    name: str
    flags: tuple[str, ...]
    """The train option(s) each grid value sets (two for a clip pair)."""
    defaults: tuple[Value, ...]
    arms: tuple[str, ...]
    """Arms this kind may run; the default ``--time``."""
    held: tuple[str, ...] = ()
    """Options both arms get at the info arm's value unless passed through (:func:`held_values`)."""
    symbol: str = ""
    """Short symbol for legends and tables."""
    value_help: str = ""
    arm_methods: dict[str, str] = field(default_factory=lambda: dict(ARM_METHODS))
    """The `infoppo train --method` of each arm."""


KINDS: dict[str, SweepKind] = {
    "gamma": SweepKind(
        name="gamma",
        flags=("--gamma",),
        defaults=(1.0, 0.9999, 0.999, 0.99),
        arms=("info", "token"),
        held=("--lambd",),
        symbol="γ",
        value_help="discount factors in (0, 1], e.g. 1.0,0.999",
    ),
    "lambda": SweepKind(
        name="lambda",
        flags=("--lambd",),
        defaults=(1.0, 0.99, 0.95),
        arms=("info", "token"),
        held=("--gamma",),
        symbol="λ",
        value_help="GAE λ values in [0, 1], e.g. 1.0,0.95",
    ),
    "clip": SweepKind(
        name="clip",
        flags=("--eps-low-info", "--eps-high-info"),
        defaults=((5.0, 10.0), (10.0, 20.0), (20.0, 40.0), (10.0, 10.0)),
        arms=("info",),
        symbol="ε",
        value_help="EPS_LOW:EPS_HIGH pairs (each >= 0), e.g. 5:10,10:20",
    ),
    "norm": SweepKind(
        name="norm",
        flags=("--norm",),
        defaults=tuple(NORMS),
        arms=("info",),
        symbol="norm",
        value_help="entropy normalisations among global, batch, sentence",
    ),
    "components": SweepKind(
        name="components",
        flags=(),
        defaults=((),),
        arms=COMPONENT_METHODS,
        held=("--gamma", "--lambd"),
        symbol="method",
        value_help="no values (its arms are methods; set γ and λ with --gamma and --lambd)",
        arm_methods={method: method for method in COMPONENT_METHODS},
    ),
    "methods": SweepKind(
        name="methods",
        flags=(),
        defaults=((),),
        arms=COMPARED_METHODS,
        symbol="method",
        value_help="no values (its arms are methods, each with its own recipe; choose them with --time)",
        arm_methods={method: method for method in COMPARED_METHODS},
    ),
}


def sweep_kind(name: str) -> SweepKind:
    """The :class:`SweepKind` called ``name``; an unknown name is a :class:`UsageError`."""
    try:
        return KINDS[name]
    except KeyError:
        raise UsageError(f"unknown sweep kind {name!r}; choose one of {', '.join(SWEEP_KINDS)}") from None


def format_value(kind: str, value: Value) -> str:
    """The value as it appears in run names and commands: ``0.999``, ``5:10``, ``batch``."""
    if isinstance(value, tuple):
        return ":".join(_format_number(part) for part in value)
    if isinstance(value, float):
        # γ and λ keep their decimal point (1.0, not 1); repr round-trips exactly.
        return repr(value) if kind in ("gamma", "lambda") else _format_number(value)
    return str(value)


def _format_number(number: float) -> str:
    return str(int(number)) if float(number).is_integer() and abs(number) < 1e15 else repr(float(number))


def parse_values(
    kind: str, raw: Sequence[str] | None, defaults: Sequence[Value] | None = None
) -> tuple[Value, ...]:
    """Grid values from ``--values`` (comma-separated, the option may repeat); when ``raw`` is None,
    ``defaults`` (a preset's own grid) or else InfoPPO's ablation grid. Invalid or out-of-range values are a
    :class:`UsageError`; duplicates are dropped."""
    spec = sweep_kind(kind)
    if raw is None:
        return tuple(defaults) if defaults is not None else spec.defaults
    items = [item.strip() for chunk in raw for item in chunk.split(",") if item.strip()]
    if not items:
        raise UsageError(f"--values is empty; give {spec.value_help} (or leave it out for InfoPPO's grid)")
    if not spec.flags:
        raise UsageError(f"the {kind} sweep takes {spec.value_help}; got --values {','.join(items)}")
    values = [_parse_one(spec, item) for item in items]
    return tuple(dict.fromkeys(values))


def _parse_one(spec: SweepKind, item: str) -> Value:
    """One ``--values`` item: a value per flag of the kind (``5:10`` for clip), each checked by the
    declaration of the setting its flag gives (``components.SETTINGS``)."""
    bad = f"--values for the {spec.name} sweep takes {spec.value_help}; got {item!r}"
    parts = item.split(":")
    if len(parts) != len(spec.flags):
        raise UsageError(bad)
    values: list[float | str] = []
    for flag, part in zip(spec.flags, parts, strict=True):
        setting = SETTING_OF_OPTION[flag]
        try:
            value = part if setting.choices else float(part)
        except ValueError:
            raise UsageError(bad) from None
        problem = setting.problem(value)
        if problem:
            raise UsageError(bad if setting.choices else f"{bad} ({flag} {problem})")
        values.append(value)
    return tuple(values) if len(values) > 1 else values[0]  # type: ignore[return-value]


def parse_time_arms(kind: str, raw: str | None) -> tuple[str, ...]:
    """The arms from ``--time info,token`` (``--time ppo,infoppo`` for components); the kind's default
    arms when ``raw`` is None."""
    spec = sweep_kind(kind)
    if raw is None:
        return spec.arms
    arms = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [arm for arm in arms if arm not in spec.arm_methods]
    if not arms or unknown:
        shown = ", ".join(unknown) if unknown else repr(raw)
        choices = ", ".join(spec.arm_methods)
        raise UsageError(f"unknown --time {shown}; choose from {choices} (comma-separated)")
    outside = [arm for arm in arms if arm not in spec.arms]
    if outside:
        raise UsageError(
            f"the {kind} sweep varies a setting only information-time PPO has; --time can only be "
            f"{', '.join(spec.arms)}, not {', '.join(outside)}"
        )
    return arms
