"""Sweep grids: the runs a sweep expands to, each an `infoppo train` request, their names and the commands
of their phases (a run's train command is its request's, as
:func:`~infoppo_cli.train.request.train_argv` writes it; what each kind varies is in
:mod:`infoppo_cli.sweepdir.kinds`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import parse_selection, selection_text
from infoppo_cli.eval.settings import EvalCommandOptions, EvalSettings
from infoppo_cli.rundir import RunDir
from infoppo_cli.schema import SEEDS, command_line, flag_of, option_fields
from infoppo_cli.sweep.kinds import CONTROLLED_HINTS, SWEEP_CONTROLLED_FIELDS, held_values
from infoppo_cli.sweepdir.kinds import KINDS, Value, format_value, parse_time_arms, parse_values, sweep_kind
from infoppo_cli.train.presets import preset
from infoppo_cli.train.request import TrainRequest, train_argv

__all__ = ["GridPoint", "SweepPlan", "build_plan", "expand_grid", "parse_time_arms", "parse_values"]
__all__ += ["KINDS", "check_train_options", "parse_eval_benches"]

MAX_SEEDS = 100
"""More seeds per grid point than any study reports: a larger --seeds is a typo (or a shell variable)."""
MAX_RUNS = 1000
"""The most training runs one sweep takes; sweep.json and the dry run list every one of them."""
LONG_SWEEP_ROUNDS = 8
"""More rounds of runs one after another (each a full RL run of hours) than InfoPPO's largest ablation grid
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
    first_seed: int = 1,
) -> list[GridPoint]:
    """Every (value, arm, seed) combination, seeds ``first_seed`` onwards, value-major and then
    seed-major, so that both arms of a value run back to back and a sweep stopped early leaves whole
    seeds (every arm of them) done.

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
        for seed in range(first_seed, first_seed + seeds)
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


def check_train_options(kind: str, train_options: Mapping[str, Any]) -> None:
    """Refuse train options that the sweep sets itself for each run (a clear line, exit 2)."""
    spec = sweep_kind(kind)
    fields = option_fields(TrainRequest)
    controlled = {*SWEEP_CONTROLLED_FIELDS, *(fields[flag] for flag in spec.flags)}
    for name in train_options:
        if name in controlled:
            hint = CONTROLLED_HINTS.get(name, " (use the sweep's own options or --values)")
            flag = flag_of(TrainRequest, name, train_options[name])
            raise UsageError(f"{flag} is set by the {kind} sweep and cannot be passed to train{hint}")


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep will run: its grid points, each an `infoppo train` request, and the command
    line of each phase."""

    kind: str
    preset: str
    values: tuple[Value, ...]
    arms: tuple[str, ...]
    seeds: int
    out_dir: Path
    first_seed: int = 1
    """``--first-seed``: the grid's seeds are ``first_seed .. first_seed + seeds - 1``."""
    eval_benches: tuple[str, ...] = ()
    """``--final-eval-bench``: the benchmarks each run's final model is evaluated on after training."""
    eval_max_tokens: int | None = None
    """The preset's response length, which eval generates up to (InfoPPO's evaluation protocol)."""
    train_options: Mapping[str, Any] = field(default_factory=dict)
    """The train options every run gets, as ``TrainRequest`` fields (a secret's value redacted)."""
    run_name_prefix: str | None = None
    """``--run-name-prefix``: each run is named NAME-<grid point> in wandb and TensorBoard."""
    held_defaults: Mapping[str, float] = field(default_factory=dict)
    """The preset's held γ or λ for this kind (``[sweeps.gamma]``), over the info arm's method's."""

    @property
    def points(self) -> tuple[GridPoint, ...]:
        """Every run of the sweep, in the order they start."""
        return tuple(
            expand_grid(self.kind, self.values, self.arms, self.seeds, self.effective_held(), self.first_seed)
        )

    def effective_held(self) -> dict[str, float]:
        """What every run holds, flag -> value: a train option's value where one is given."""
        fields = option_fields(TrainRequest)
        passed = {flag: self.train_options.get(fields[flag]) for flag in KINDS[self.kind].held}
        return {**self.held(), **{flag: float(v) for flag, v in passed.items() if v is not None}}

    def settings(self) -> dict[str, object]:
        """The sweep's options, for the record in ``sweep.json``."""
        return {
            "values": [format_value(self.kind, value) for value in self.values],
            "time": list(self.arms),
            "seeds": self.seeds,
            "first_seed": self.first_seed,
            "eval_bench": list(self.eval_benches),
            "train_options": dict(self.train_options),
            "run_name_prefix": self.run_name_prefix,
        }

    def run_dir(self, point: GridPoint) -> Path:
        """``OUT/<run name>``: one run per directory."""
        return self.out_dir / point.name

    def passes(self, flag: str) -> bool:
        """Whether the sweep's train options set the option ``flag`` spells."""
        return option_fields(TrainRequest).get(flag) in self.train_options

    def held(self) -> dict[str, float]:
        """The held options this sweep's runs get (those not given as train options), flag -> value."""
        held = {**held_values(KINDS[self.kind]), **self.held_defaults}
        return {flag: value for flag, value in held.items() if not self.passes(flag)}

    def run_name(self, point: GridPoint) -> str:
        """The point's name in wandb and TensorBoard: the grid point's, after ``--run-name-prefix``."""
        return f"{self.run_name_prefix}-{point.name}" if self.run_name_prefix else point.name

    def train_request(self, point: GridPoint) -> TrainRequest:
        """The `infoppo train` request of this point: the held values, the sweep's train options, the
        point's value, and what the sweep sets for every run (its preset, method, seed and directory;
        its wandb group, the sweep directory's name unless ``--wandb-group``, and its name)."""
        fields = option_fields(TrainRequest)
        held = {fields[flag]: value for flag, value in self.held().items()}
        own = {
            "preset": self.preset,
            "method": point.method,
            "seed": point.seed,
            "output_dir": str(self.run_dir(point)),
            "wandb_group": self.train_options.get("wandb_group") or self.out_dir.name,
            "run_name": self.run_name(point),
        }
        return TrainRequest(**{**held, **self.train_options, **point.swept_fields(), **own})

    def train_command(self, point: GridPoint) -> list[str]:
        """``infoppo train ...`` for this point: its request's command line (:func:`train_argv`)."""
        return train_argv(self.train_request(point))

    def eval_command(self, point: GridPoint) -> list[str] | None:
        """``infoppo eval`` on the run's final model, or None without ``--final-eval-bench``."""
        if not self.eval_benches:
            return None
        run_dir = RunDir(self.run_dir(point))
        asked = {
            "model": str(run_dir.final),
            "benches": ",".join(self.eval_benches),  # as --bench takes them
            "max_tokens": self.eval_max_tokens or None,
            "benches_file": self.train_options.get("benches_file"),  # where the benchmarks' names live
        }
        return command_line(
            ("infoppo", "eval"), (EvalSettings, asked), (EvalCommandOptions, {"out": run_dir.eval})
        )

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
    first_seed: int = 1,
    eval_benches: Sequence[str] = (),
    train_options: Mapping[str, Any] | None = None,
    run_name_prefix: str | None = None,
) -> SweepPlan:
    """Validate the sweep options and expand them into a :class:`SweepPlan`; ``train_options`` are the
    train options every run gets, as ``TrainRequest`` fields."""
    sweep_kind(kind)
    response_length = preset_response_length(preset)
    grid = preset_sweep_grid(preset, kind)
    check_train_options(kind, train_options or {})
    check_seeds(seeds, first_seed)
    defaults = grid.values if grid is not None else None
    parsed_values, arms = parse_values(kind, values, defaults), parse_time_arms(kind, time)
    check_grid_size(len(parsed_values), len(arms), seeds)
    return SweepPlan(
        kind=kind,
        preset=preset,
        values=parsed_values,
        arms=arms,
        seeds=seeds,
        first_seed=first_seed,
        out_dir=Path(out_dir).resolve(),
        eval_benches=tuple(eval_benches),
        eval_max_tokens=response_length,
        train_options=dict(train_options or {}),
        run_name_prefix=run_name_prefix,
        held_defaults=dict(grid.held) if grid is not None else {},
    )


def check_seeds(seeds: int, first_seed: int = 1) -> None:
    if first_seed < 1:
        raise UsageError(f"--first-seed must be >= 1, got {first_seed}")
    if first_seed + seeds - 1 > SEEDS.most:
        raise UsageError(
            f"--first-seed {first_seed} with --seeds {seeds} goes past the largest seed, {SEEDS.most}"
        )
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {seeds}")
    if seeds > MAX_SEEDS:
        raise UsageError(
            f"--seeds {seeds} asks for more than {MAX_SEEDS} seeds of every grid point "
            "(each a full training run); a sweep runs N seeds from --first-seed, so give N"
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


def parse_eval_benches(raw: str | None, benches_file: str | None = None) -> tuple[str, ...]:
    """The benchmarks of ``--final-eval-bench`` as ``eval --bench`` items (``aime24``, ``mine=/abs/f.jsonl``),
    parsed by the parser every benchmark option shares (names, ``NAME=FILE``, ``all``, ``none``)."""
    if raw is None:
        return ()
    chosen = parse_selection(raw, benches_file, option="--final-eval-bench")
    return tuple(selection_text({name: file}) for name, file in chosen.items())


def preset_response_length(name: str) -> int:
    """The preset's max response length; an unknown preset is a :class:`UsageError` listing them."""
    return preset(name).max_response_tokens


def preset_sweep_grid(name: str, kind: str) -> Any:
    """The preset's own grid for ``kind`` (``[sweeps.gamma]``: values and the held γ or λ), or None."""
    return preset(name).sweeps.get(kind)
