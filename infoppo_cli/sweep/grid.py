"""Sweep grids: the `infoppo train` runs a sweep kind expands to, their names and their commands.

A sweep compares settings of one hyper-parameter. For ``gamma`` and ``lambda`` every value is run in
two arms: information time (``--method infoppo``) and token time (``--method ppo`` with the same γ and
λ), so the arms differ only in their time axis. ``clip`` and ``norm`` vary settings that exist only
in information time, so they have the info arm alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from infoppo_cli.errors import UsageError

Value = float | str | tuple[float, float]
"""One grid value: γ or λ (float), a normalisation mode (str) or an (ε_low, ε_high) pair."""

SWEEP_KINDS: tuple[str, ...] = ("gamma", "lambda", "clip", "norm")
TIME_ARMS: tuple[str, ...] = ("info", "token")
ARM_METHODS: dict[str, str] = {"info": "infoppo", "token": "ppo"}
"""The `infoppo train --method` each time arm runs."""

# InfoPPO's paper defaults (issue 3): a γ sweep holds λ at 0.99 and a λ sweep holds γ at 0.999, for
# both arms, so that token-time PPO runs with exactly the discounting the info arm has.
PAPER_GAMMA = 0.999
PAPER_LAMBDA = 0.99

RAY_JOB_TRAIN_ARGS: tuple[str, ...] = ("--address", "auto")
"""Added to train inside a Ray job: join the job's own cluster (``RAY_ADDRESS``), start no Ray of its own."""

SWEEP_CONTROLLED_FLAGS: tuple[str, ...] = (
    "--preset",
    "--method",
    "--seed",
    "--output-dir",
    "--address",
    "--resume",
    "--dry-run",
)
"""`infoppo train` options the sweep sets itself; they cannot be passed through."""


@dataclass(frozen=True)
class SweepKind:
    """What one sweep kind varies and its paper defaults."""

    name: str
    flags: tuple[str, ...]
    """The train option(s) each grid value sets (two for a clip pair)."""
    defaults: tuple[Value, ...]
    arms: tuple[str, ...]
    """Time arms this kind may run; the default ``--time``."""
    held: dict[str, float] = field(default_factory=dict)
    """Options both arms get unless passed through explicitly (flag -> value)."""
    symbol: str = ""
    """Short symbol for legends and tables."""
    value_help: str = ""


KINDS: dict[str, SweepKind] = {
    "gamma": SweepKind(
        name="gamma",
        flags=("--gamma",),
        defaults=(1.0, 0.9999, 0.999, 0.99),
        arms=("info", "token"),
        held={"--lambd": PAPER_LAMBDA},
        symbol="γ",
        value_help="discount factors in (0, 1], e.g. 1.0,0.999",
    ),
    "lambda": SweepKind(
        name="lambda",
        flags=("--lambd",),
        defaults=(1.0, 0.99, 0.95),
        arms=("info", "token"),
        held={"--gamma": PAPER_GAMMA},
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
        defaults=("global", "batch", "sentence"),
        arms=("info",),
        symbol="norm",
        value_help="entropy normalisations among global, batch, sentence",
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


@dataclass(frozen=True)
class GridPoint:
    """One training run of a sweep: a value, a time arm and a seed."""

    kind: str
    value: Value
    time: str
    seed: int

    @property
    def method(self) -> str:
        """The ``infoppo train --method`` of this point's time arm."""
        return ARM_METHODS[self.time]

    @property
    def value_label(self) -> str:
        """The value as text (``0.999``, ``5:10``, ``batch``)."""
        return format_value(self.kind, self.value)

    @property
    def name(self) -> str:
        """Readable, file-system safe: ``gamma-0.999-info-seed1``, ``clip-5-10-info-seed2``."""
        return f"{self.kind}-{self.value_label.replace(':', '-')}-{self.time}-seed{self.seed}"

    def swept_args(self) -> list[str]:
        """The train options that set this point's value."""
        spec = KINDS[self.kind]
        parts = self.value if isinstance(self.value, tuple) else (self.value,)
        args: list[str] = []
        for flag, part in zip(spec.flags, parts, strict=True):
            args += [flag, part if isinstance(part, str) else _command_number(self.kind, part)]
        return args

    def parameters(self) -> dict[str, float | str]:
        """Swept and held hyper-parameters by train option name without dashes (for records)."""
        spec = KINDS[self.kind]
        parts = self.value if isinstance(self.value, tuple) else (self.value,)
        pairs = zip(spec.flags, parts, strict=True)
        params: dict[str, float | str] = {flag.lstrip("-"): part for flag, part in pairs}
        params.update({flag.lstrip("-"): held for flag, held in spec.held.items()})
        return params


def _command_number(kind: str, number: float) -> str:
    return repr(float(number)) if kind in ("gamma", "lambda") else _format_number(number)


def parse_values(kind: str, raw: Sequence[str] | None) -> tuple[Value, ...]:
    """Grid values from ``--values`` (comma-separated, the option may repeat); the paper's defaults when
    ``raw`` is empty. Invalid or out-of-range values are a :class:`UsageError`; duplicates are dropped."""
    spec = sweep_kind(kind)
    items = [item.strip() for chunk in raw or () for item in chunk.split(",") if item.strip()]
    if not items:
        return spec.defaults
    values = [_parse_one(spec, item) for item in items]
    return tuple(dict.fromkeys(values))


def _parse_one(spec: SweepKind, item: str) -> Value:
    from infoppo_cli.infotime import NORM_MODES, validate_hyperparameters

    bad = f"--values for the {spec.name} sweep takes {spec.value_help}; got {item!r}"
    if spec.name == "norm":
        if item not in NORM_MODES:
            raise UsageError(bad)
        return item
    try:
        numbers = tuple(float(part) for part in item.split(":"))
    except ValueError:
        raise UsageError(bad) from None
    if len(numbers) != len(spec.flags) or not all(math.isfinite(number) for number in numbers):
        raise UsageError(bad)
    try:
        if spec.name == "clip":
            validate_hyperparameters(eps_low=numbers[0], eps_high=numbers[1])
        elif spec.name == "gamma":
            validate_hyperparameters(gamma=numbers[0])
        else:
            validate_hyperparameters(lambd=numbers[0])
    except ValueError as exc:
        raise UsageError(f"{bad} ({exc})") from None
    return numbers if spec.name == "clip" else numbers[0]


def parse_time_arms(kind: str, raw: str | None) -> tuple[str, ...]:
    """The time arms from ``--time info,token``; the kind's default arms when ``raw`` is None."""
    spec = sweep_kind(kind)
    if raw is None:
        return spec.arms
    arms = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [arm for arm in arms if arm not in TIME_ARMS]
    if not arms or unknown:
        shown = ", ".join(unknown) if unknown else repr(raw)
        raise UsageError(f"unknown --time {shown}; choose from {', '.join(TIME_ARMS)} (comma-separated)")
    outside = [arm for arm in arms if arm not in spec.arms]
    if outside:
        raise UsageError(
            f"the {kind} sweep varies a setting only information-time PPO has; --time can only be "
            f"{', '.join(spec.arms)}, not {', '.join(outside)}"
        )
    return arms


def expand_grid(kind: str, values: Sequence[Value], arms: Sequence[str], seeds: int) -> list[GridPoint]:
    """Every (value, arm, seed) combination, value-major so that both arms of a value run back to back."""
    sweep_kind(kind)
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {seeds}")
    return [
        GridPoint(kind=kind, value=value, time=arm, seed=seed)
        for value in values
        for seed in range(1, seeds + 1)
        for arm in arms
    ]


def option_name(token: str) -> str | None:
    """``--gamma`` for ``--gamma`` or ``--gamma=0.9``; None for a non-option token."""
    return token.split("=", 1)[0] if token.startswith("--") else None


def check_passthrough(kind: str, extra_train_args: Sequence[str]) -> None:
    """Refuse pass-through train options that the sweep sets itself (a clear line, exit 2)."""
    spec = sweep_kind(kind)
    hints = {"--seed": " (use --seeds N for seeds 1..N)", "--method": " (use --time info,token)"}
    for token in extra_train_args:
        name = option_name(token)
        if name in SWEEP_CONTROLLED_FLAGS or name in spec.flags:
            hint = hints.get(name, " (use the sweep's own options or --values)")
            raise UsageError(f"{name} is set by the {kind} sweep and cannot be passed to train{hint}")


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep will run: its grid points and the command line of each phase."""

    kind: str
    preset: str
    values: tuple[Value, ...]
    arms: tuple[str, ...]
    seeds: int
    out_dir: Path
    eval_benches: tuple[str, ...] = ()
    extra_train_args: tuple[str, ...] = ()
    eval_max_tokens: int | None = None
    """The preset's response length, which eval generates up to (the paper's protocol)."""

    @property
    def points(self) -> tuple[GridPoint, ...]:
        """Every run of the sweep, in the order they start."""
        return tuple(expand_grid(self.kind, self.values, self.arms, self.seeds))

    def settings(self) -> dict[str, object]:
        """The sweep's options, for the record in ``sweep.json``."""
        return {
            "values": [format_value(self.kind, value) for value in self.values],
            "time": list(self.arms),
            "seeds": self.seeds,
            "eval_bench": list(self.eval_benches),
            "extra_train_args": list(self.extra_train_args),
        }

    def sweep_command(self, address: str | None = None, max_parallel: int = 1) -> list[str]:
        """The ``infoppo sweep`` command line that resumes this sweep (recorded in ``sweep.json``)."""
        argv = ["infoppo", "sweep", self.kind, "--preset", self.preset]
        argv += ["--values", ",".join(format_value(self.kind, value) for value in self.values)]
        argv += ["--time", ",".join(self.arms), "--seeds", str(self.seeds), "--out", str(self.out_dir)]
        if self.eval_benches:
            argv += ["--eval-bench", ",".join(self.eval_benches)]
        if address:
            argv += ["--address", address, "--max-parallel", str(max_parallel)]
        return argv + list(self.extra_train_args)

    def run_dir(self, point: GridPoint) -> Path:
        """``OUT/<run name>``: one run per directory."""
        return self.out_dir / point.name

    def train_command(self, point: GridPoint) -> list[str]:
        """``infoppo train ...`` for this point: the same command line a user would type."""
        passed = {option_name(token) for token in self.extra_train_args}
        held: list[str] = []
        for flag, value in KINDS[self.kind].held.items():
            if flag not in passed:
                held += [flag, repr(float(value))]
        return [
            "infoppo",
            "train",
            "--preset",
            self.preset,
            "--method",
            point.method,
            *point.swept_args(),
            *held,
            "--seed",
            str(point.seed),
            "--output-dir",
            str(self.run_dir(point)),
            *self.extra_train_args,
        ]

    def eval_command(self, point: GridPoint) -> list[str] | None:
        """``infoppo eval`` on the run's final model, or None without ``--eval-bench``."""
        if not self.eval_benches:
            return None
        run_dir = self.run_dir(point)
        return [
            "infoppo",
            "eval",
            "--model",
            str(run_dir / "final"),
            "--bench",
            ",".join(self.eval_benches),
            "--out",
            str(run_dir / "eval"),
            *(["--max-tokens", str(self.eval_max_tokens)] if self.eval_max_tokens else []),
        ]

    def phases(self, point: GridPoint) -> list[tuple[str, list[str]]]:
        """The (phase name, command) pairs this point runs, in order."""
        phases = [("train", self.train_command(point))]
        evaluation = self.eval_command(point)
        if evaluation is not None:
            phases.append(("eval", evaluation))
        return phases


def build_plan(
    kind: str,
    *,
    preset: str,
    out_dir: Path,
    values: Sequence[str] | None = None,
    time: str | None = None,
    seeds: int = 1,
    eval_benches: Sequence[str] = (),
    extra_train_args: Sequence[str] = (),
) -> SweepPlan:
    """Validate the sweep options and expand them into a :class:`SweepPlan`."""
    sweep_kind(kind)
    response_length = preset_response_length(preset)
    check_passthrough(kind, extra_train_args)
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {seeds}")
    return SweepPlan(
        kind=kind,
        preset=preset,
        values=parse_values(kind, values),
        arms=parse_time_arms(kind, time),
        seeds=seeds,
        out_dir=Path(out_dir).resolve(),
        eval_benches=tuple(eval_benches),
        extra_train_args=tuple(extra_train_args),
        eval_max_tokens=response_length,
    )


def parse_eval_benches(raw: str | None) -> tuple[str, ...]:
    """The benchmarks of ``--eval-bench aime24,aime25`` (or ``all``), checked against the registry."""
    from infoppo_cli.eval.benchmarks import resolve_bench_names

    if raw is None:
        return ()
    return tuple(resolve_bench_names(raw))


def preset_response_length(name: str) -> int:
    """The preset's max response length; an unknown preset is a :class:`UsageError` listing them."""
    from infoppo_cli.train.presets import preset

    return preset(name).max_response_tokens
