"""Sweep grids: the `infoppo train` runs a sweep expands to, their names and their commands (what
each kind varies is in :mod:`infoppo_cli.sweep.kinds`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import redact_argv
from infoppo_cli.rundir import RunDir
from infoppo_cli.schema import option_fields
from infoppo_cli.sweep.kinds import (
    KINDS,
    RAY_JOB_TRAIN_ARGS,
    SWEEP_CONTROLLED_FIELDS,
    SWEEP_CONTROLLED_FLAGS,
    Value,
    command_number,
    format_value,
    held_values,
    parse_time_arms,
    parse_values,
    sweep_kind,
)
from infoppo_cli.train.request import TrainRequest

__all__ = ["GridPoint", "SweepPlan", "build_plan", "expand_grid", "parse_time_arms", "parse_values"]
__all__ += ["RAY_JOB_TRAIN_ARGS", "KINDS", "option_name", "parse_eval_benches"]

MAX_SEEDS = 100
"""More seeds per grid point than any study reports: a larger --seeds is a typo (or a shell variable)."""
MAX_RUNS = 1000
"""The most training runs one sweep takes; sweep.json and the dry run list every one of them."""
LONG_SWEEP_ROUNDS = 8
"""More rounds of runs one after another (each a full RL run of hours) than the paper's largest grid
(gamma: 4 values x 2 arms, run locally) earn a warning."""
MANY_RUNS = 64
"""Runs at once this many times over (each a GPU allocation) earn a warning however parallel they go."""


@dataclass(frozen=True)
class GridPoint:
    """One training run of a sweep: a value, a time arm and a seed."""

    kind: str
    value: Value
    time: str
    seed: int
    held: tuple[tuple[str, float], ...] = ()
    """The held options of this run (``(("--lambd", 1.0),)``); empty: the info arm's method's."""

    @property
    def method(self) -> str:
        """The ``infoppo train --method`` of this point's arm."""
        return KINDS[self.kind].arm_methods[self.time]

    @property
    def value_label(self) -> str:
        """The value as text (``0.999``, ``5:10``, ``batch``)."""
        return format_value(self.kind, self.value)

    @property
    def name(self) -> str:
        """Readable, file-system safe: ``gamma-0.999-info-seed1``, ``clip-5-10-info-seed2``."""
        parts = (self.kind, self.value_label.replace(":", "-"), self.time, f"seed{self.seed}")
        return "-".join(part for part in parts if part)  # components: no value, the arm is the method

    def swept_args(self) -> list[str]:
        """The train options that set this point's value."""
        spec = KINDS[self.kind]
        parts = self.value if isinstance(self.value, tuple) else (self.value,)
        args: list[str] = []
        for flag, part in zip(spec.flags, parts, strict=True):
            args += [flag, part if isinstance(part, str) else command_number(self.kind, part)]
        return args

    def swept_fields(self) -> dict[str, float | str]:
        """This point's value as ``TrainRequest`` fields (``{"eps_low_info": 5.0, ...}``)."""
        spec, fields = KINDS[self.kind], option_fields(TrainRequest)
        parts = self.value if isinstance(self.value, tuple) else (self.value,)
        return {fields[flag]: part for flag, part in zip(spec.flags, parts, strict=True)}

    def parameters(self) -> dict[str, float | str]:
        """Swept and held hyper-parameters by train option name without dashes (for records)."""
        spec = KINDS[self.kind]
        parts = self.value if isinstance(self.value, tuple) else (self.value,)
        pairs = zip(spec.flags, parts, strict=True)
        params: dict[str, float | str] = {flag.lstrip("-"): part for flag, part in pairs}
        held = dict(self.held) if self.held else held_values(spec)
        params.update({flag.lstrip("-"): value for flag, value in held.items()})
        return params


def expand_grid(
    kind: str,
    values: Sequence[Value],
    arms: Sequence[str],
    seeds: int,
    held: Mapping[str, float] | None = None,
) -> list[GridPoint]:
    """Every (value, arm, seed) combination, value-major so that both arms of a value run back to back.

    ``held`` are the options both arms hold (the info arm's method's when None). Where the two clocks
    coincide (γ = λ = 1: information-time GAE is then token-time GAE, and the arms run the same
    program) the token arm is left out and the info arm stands for both (:func:`clocks_coincide`)."""
    spec = sweep_kind(kind)
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {seeds}")
    held = dict(held_values(spec) if held is None else held)
    frozen = tuple(sorted(held.items()))
    return [
        GridPoint(kind=kind, value=value, time=arm, seed=seed, held=frozen)
        for value in values
        for seed in range(1, seeds + 1)
        for arm in arms
        if not (arm == "token" and "info" in arms and clocks_coincide(kind, value, held))
    ]


def clocks_coincide(kind: str, value: Value, held: Mapping[str, float]) -> bool:
    """Whether a γ or λ point runs with γ = λ = 1, where both clocks give the same advantages."""
    if kind not in ("gamma", "lambda") or not isinstance(value, float):
        return False
    gamma = value if kind == "gamma" else held.get("--gamma")
    lambd = value if kind == "lambda" else held.get("--lambd")
    return gamma == 1.0 and lambd == 1.0


def option_name(token: str) -> str | None:
    """``--gamma`` for ``--gamma`` or ``--gamma=0.9``; None for a non-option token."""
    return token.split("=", 1)[0] if token.startswith("--") else None


def passed_fields(extra_train_args: Sequence[str]) -> set[str]:
    """The ``TrainRequest`` fields that pass-through train options set, whichever flag spells them
    (``--lambda`` and ``--lambd`` both set ``lambd``)."""
    fields = option_fields(TrainRequest)
    return {fields[name] for name in map(option_name, extra_train_args) if name in fields}


def check_passthrough(kind: str, extra_train_args: Sequence[str]) -> None:
    """Refuse pass-through train options that the sweep sets itself (a clear line, exit 2)."""
    spec = sweep_kind(kind)
    fields = option_fields(TrainRequest)
    controlled = {*SWEEP_CONTROLLED_FIELDS, *(fields[flag] for flag in spec.flags)}
    hints = {"seed": " (use --seeds N for seeds 1..N)", "method": " (use --time info,token)"}
    for token in extra_train_args:
        name = option_name(token)
        if name in SWEEP_CONTROLLED_FLAGS or fields.get(name or "") in controlled:
            hint = hints.get(fields.get(name or "", ""), " (use the sweep's own options or --values)")
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
    train_options: Mapping[str, Any] = field(default_factory=dict)
    """``extra_train_args`` as ``TrainRequest`` fields, parsed as `infoppo train` parses them."""
    tracking: Mapping[str, str] = field(default_factory=dict)
    """The sweep's tracking options as ``TrainRequest`` fields (``run_name``: the runs' prefix)."""
    held_defaults: Mapping[str, float] = field(default_factory=dict)
    """The preset's held γ or λ for this kind (``[sweeps.gamma]``), over the info arm's method's."""

    @property
    def points(self) -> tuple[GridPoint, ...]:
        """Every run of the sweep, in the order they start."""
        return tuple(expand_grid(self.kind, self.values, self.arms, self.seeds, self.effective_held()))

    def effective_held(self) -> dict[str, float]:
        """What every run holds, flag -> value: a pass-through option's value where one is given."""
        fields = option_fields(TrainRequest)
        passed = {flag: self.train_options.get(fields[flag]) for flag in KINDS[self.kind].held}
        return {**self.held(), **{flag: float(v) for flag, v in passed.items() if v is not None}}

    def settings(self) -> dict[str, object]:
        """The sweep's options, for the record in ``sweep.json``."""
        return {
            "values": [format_value(self.kind, value) for value in self.values],
            "time": list(self.arms),
            "seeds": self.seeds,
            "eval_bench": list(self.eval_benches),
            "extra_train_args": redact_argv(list(self.extra_train_args)),  # a wandb key stays out
            "tracking": dict(self.tracking),
        }

    def sweep_command(self, launcher_args: Sequence[str] = ()) -> list[str]:
        """The ``infoppo sweep`` command line that resumes this sweep (recorded in ``sweep.json``);
        ``launcher_args`` are the options that chose where runs go (``--address``, ``--launcher`` ...)."""
        argv = ["infoppo", "sweep", self.kind, "--preset", self.preset]
        if KINDS[self.kind].flags:
            argv += ["--values", ",".join(format_value(self.kind, value) for value in self.values)]
        argv += ["--time", ",".join(self.arms), "--seeds", str(self.seeds), "--out", str(self.out_dir)]
        if self.eval_benches:
            argv += ["--eval-bench", ",".join(self.eval_benches)]
        argv += [token for name, value in self.tracking.items() for token in (_flag(name), value)]
        return argv + list(launcher_args) + redact_argv(list(self.extra_train_args))

    def run_dir(self, point: GridPoint) -> Path:
        """``OUT/<run name>``: one run per directory."""
        return self.out_dir / point.name

    def passes(self, flag: str) -> bool:
        """Whether the pass-through train options set the option ``flag`` spells."""
        return option_fields(TrainRequest).get(flag) in passed_fields(self.extra_train_args)

    def held(self) -> dict[str, float]:
        """The held options this sweep's runs get (those not passed through), flag -> value."""
        held = {**held_values(KINDS[self.kind]), **self.held_defaults}
        return {flag: value for flag, value in held.items() if not self.passes(flag)}

    def train_request(self, point: GridPoint) -> TrainRequest:
        """The `infoppo train` request of this point: what :meth:`train_command` asks for, checked by
        ``plan_training`` before the sweep launches that command."""
        fields = option_fields(TrainRequest)
        held = {fields[flag]: value for flag, value in self.held().items()}
        return TrainRequest(
            **{**held, **self.train_options, **point.swept_fields()},
            preset=self.preset,
            method=point.method,
            seed=point.seed,
            output_dir=str(self.run_dir(point)),
            **self.tracking_fields(point),
        )

    def tracking_fields(self, point: GridPoint) -> dict[str, str]:
        """The point's tracking as ``TrainRequest`` fields: the sweep's options, grouped by the sweep
        directory's name unless ``--wandb-group``, named by the point (after ``--run-name``'s prefix)."""
        fields = {name: value for name, value in self.tracking.items() if name != "run_name"}
        fields.setdefault("wandb_group", self.out_dir.name)
        prefix = self.tracking.get("run_name")
        fields["run_name"] = f"{prefix}-{point.name}" if prefix else point.name
        return fields

    def train_command(self, point: GridPoint) -> list[str]:
        """``infoppo train ...`` for this point: the same command line a user would type."""
        held: list[str] = []
        for flag, value in self.held().items():
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
            *(token for name, value in self.tracking_fields(point).items() for token in (_flag(name), value)),
            *redact_argv(list(self.extra_train_args)),  # a wandb key reaches runs in the environment
        ]

    def eval_command(self, point: GridPoint) -> list[str] | None:
        """``infoppo eval`` on the run's final model, or None without ``--eval-bench``."""
        if not self.eval_benches:
            return None
        run_dir = RunDir(self.run_dir(point))
        return [
            "infoppo",
            "eval",
            "--model",
            str(run_dir.final),
            "--bench",
            ",".join(self.eval_benches),
            "--out",
            str(run_dir.eval),
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
    train_options: Mapping[str, Any] | None = None,
    tracking: Mapping[str, str] | None = None,
) -> SweepPlan:
    """Validate the sweep options and expand them into a :class:`SweepPlan`; ``train_options`` are
    ``extra_train_args`` parsed into ``TrainRequest`` fields (the command line parses them)."""
    sweep_kind(kind)
    response_length = preset_response_length(preset)
    grid = preset_sweep_grid(preset, kind)
    check_passthrough(kind, extra_train_args)
    check_seeds(seeds)
    defaults = grid.values if grid is not None else None
    parsed_values, arms = parse_values(kind, values, defaults), parse_time_arms(kind, time)
    check_grid_size(len(parsed_values), len(arms), seeds)
    return SweepPlan(
        kind=kind,
        preset=preset,
        values=parsed_values,
        arms=arms,
        seeds=seeds,
        out_dir=Path(out_dir).resolve(),
        eval_benches=tuple(eval_benches),
        extra_train_args=tuple(extra_train_args),
        eval_max_tokens=response_length,
        held_defaults=dict(grid.held) if grid is not None else {},
        train_options=dict(train_options or {}),
        tracking=dict(tracking or {}),
    )


def _flag(field_name: str) -> str:
    """The `infoppo train` option of a ``TrainRequest`` field of the sweep's own (``--wandb-group``)."""
    return "--" + field_name.replace("_", "-")


def check_seeds(seeds: int) -> None:
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {seeds}")
    if seeds > MAX_SEEDS:
        raise UsageError(
            f"--seeds {seeds} asks for more than {MAX_SEEDS} seeds of every grid point "
            "(each a full training run); a sweep runs seeds 1..N, so give N"
        )


def check_grid_size(values: int, arms: int, seeds: int) -> None:
    """Refuse a grid no one means to run, before it is expanded (it would be listed run by run)."""
    runs = values * arms * seeds
    if runs > MAX_RUNS:
        raise UsageError(
            f"the grid is {runs} training runs ({values} value(s) x {arms} arm(s) x {seeds} seed(s)), "
            f"more than the {MAX_RUNS} one sweep takes; split it into smaller sweeps"
        )


def long_sweep_warning(plan: SweepPlan, parallel: int) -> str | None:
    """What a sweep will cost when that is many training runs one after another, else None."""
    runs = len(plan.points)
    at_once = max(1, min(parallel, runs))
    rounds = -(-runs // at_once)
    if rounds <= LONG_SWEEP_ROUNDS and runs <= MANY_RUNS:
        return None
    shape = f"{len(plan.values)} value(s) x {len(plan.arms)} arm(s) x {plan.seeds} seed(s)"
    return (
        f"this sweep is {runs} full training runs ({shape}), {at_once} at once: {rounds} round(s) one "
        "after another, each as long as one training run"
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


def preset_sweep_grid(name: str, kind: str) -> Any:
    """The preset's own grid for ``kind`` (``[sweeps.gamma]``: values and the held γ or λ), or None."""
    from infoppo_cli.train.presets import preset

    return preset(name).sweeps.get(kind)
