"""Model presets: the shipped ``presets/<name>.toml`` files or a user's file in the same schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.device import DEVICES
from infoppo_cli.resources import data_dir
from infoppo_cli.schema import SAMPLES_PER_PROBLEM, checked, file_problem, read_toml
from infoppo_cli.train.eval_set import DEFAULT_EVERY
from infoppo_cli.train.methods import METHODS_FILE, FlagValues, checked_flags
from infoppo_cli.train.request import RL_STEPS


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
    steps: int
    """RL steps of a run, the same for every method so that accuracy-over-steps curves share an axis."""
    openrlhf: FlagValues
    method_overrides: dict[str, FlagValues] = field(default_factory=dict)
    source: str = ""
    eval_every: int = DEFAULT_EVERY
    eval_samples: int | None = None
    """k of the in-training eval's Mean@k when the preset sets one (else ``eval --samples``'s 16)."""
    device: str = "cuda"
    task: str | None = None
    """A synthetic task built offline (``infoppo_cli/tasks``) that gives the model, the training
    prompts and the held-out benchmark; ``model`` is then left out."""
    sweeps: dict[str, SweepGrid] = field(default_factory=dict)
    """This preset's own grid for ``infoppo sweep gamma|lambda`` (else InfoPPO's, sweep/kinds.py)."""


@dataclass(frozen=True)
class SweepGrid:
    """A preset's default grid for one sweep kind: the values, and the γ or λ both arms hold."""

    values: tuple[float, ...]
    held: dict[str, float] = field(default_factory=dict)
    """``{"--lambd": 1.0}`` for a γ sweep, ``{"--gamma": 1.0}`` for a λ sweep; empty: the info arm's
    method's."""


def preset_names() -> list[str]:
    """Names of the shipped model presets (the TOML files other than methods.toml), sorted."""
    files = data_dir("presets").glob("*.toml")
    return sorted(path.stem for path in files if path.name != METHODS_FILE)


def is_preset_file(name: str) -> bool:
    """A ``--preset`` that ends in ``.toml`` is a user's file; anything else names a shipped preset."""
    return name.endswith(".toml")


class PresetFile(BaseModel):
    """A preset file as written (``presets/<name>.toml``): unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)
    summary: str = Field(min_length=1)
    model: str | None = Field(None, min_length=1)
    task: str | None = Field(None, min_length=1)
    max_response_tokens: int = Field(ge=1)
    max_prompt_tokens: int = Field(ge=1)
    actor_warmup_steps: int = Field(ge=0)
    nodes: int = Field(ge=1)
    gpus_per_node: int = Field(ge=1)
    vllm_tensor_parallel: int = Field(ge=1)
    steps: int = Field(ge=RL_STEPS.least, le=RL_STEPS.most)
    eval_every: int = Field(DEFAULT_EVERY, ge=RL_STEPS.least, le=RL_STEPS.most)
    eval_samples: int | None = Field(None, ge=SAMPLES_PER_PROBLEM.least, le=SAMPLES_PER_PROBLEM.most)
    device: Literal[tuple(DEVICES)] = "cuda"
    openrlhf: dict[str, Any] = Field(default_factory=dict)
    method_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    sweeps: dict[Literal["gamma", "lambda"], SweepGridFile] = Field(default_factory=dict)


class SweepGridFile(BaseModel):
    """``[sweeps.gamma]`` / ``[sweeps.lambda]``: ``values`` and the other of γ, λ held by both arms."""

    model_config = ConfigDict(extra="forbid", strict=True)
    values: list[float] = Field(min_length=1)
    gamma: float | None = Field(None, gt=0.0, le=1.0)
    lambd: float | None = Field(None, ge=0.0, le=1.0)


def parse_preset(name: str, body: dict[str, Any], source: str, what: str = "preset") -> Preset:
    """A :class:`Preset` from a parsed file; a missing, unknown or ill-typed key is a :class:`UsageError`
    that names the file (``what source``) and the key."""
    shown = f"{what} {source}".strip()
    table = checked(PresetFile, body, shown)
    if table.model is None and table.task is None:
        raise file_problem(shown, ("model",), "is missing (an HF id or path; or a task instead)")
    if table.model is not None and table.task is not None:
        raise file_problem(shown, ("task",), "cannot be given with model; give one of them")
    flags = checked_flags(table.openrlhf, shown, ("openrlhf",))
    overrides = {
        method: checked_flags(override, shown, ("method_overrides", method))
        for method, override in table.method_overrides.items()
    }
    fields = table.model_dump(exclude={"openrlhf", "method_overrides", "sweeps"})
    return Preset(
        name=name,
        **{**fields, "model": table.model or ""},
        openrlhf=flags,
        method_overrides=overrides,
        source=source,
        sweeps={kind: _sweep_grid(kind, grid, shown) for kind, grid in table.sweeps.items()},
    )


def _sweep_grid(kind: str, grid: SweepGridFile, shown: str) -> SweepGrid:
    swept, held = ("gamma", "lambd") if kind == "gamma" else ("lambd", "gamma")
    if getattr(grid, swept) is not None:
        raise file_problem(shown, ("sweeps", kind, swept), f"is what the {kind} sweep varies; give values")
    low = 0.0 if kind == "lambda" else 1e-12
    if not all(low <= value <= 1.0 for value in grid.values):
        raise file_problem(
            shown, ("sweeps", kind, "values"), f"must lie in {'[0, 1]' if low == 0 else '(0, 1]'}"
        )
    value = getattr(grid, held)
    return SweepGrid(tuple(dict.fromkeys(grid.values)), {f"--{held}": value} if value is not None else {})


@cache
def _shipped_preset(name: str) -> Preset:
    path = data_dir("presets") / f"{name}.toml"
    return parse_preset(name, read_toml(path, ""), f"presets/{name}.toml", "")


def preset(name: str) -> Preset:
    """The shipped preset called ``name``, or the user's preset file ``name`` (``*.toml``)."""
    if is_preset_file(name):
        path = Path(name).expanduser()
        return parse_preset(path.stem, read_toml(path, "preset file"), str(path), "preset file")
    if name not in preset_names():
        hint = " (or a path to a .toml preset file)"
        raise UsageError(f"unknown preset {name!r}; choose one of: {', '.join(preset_names())}{hint}")
    return _shipped_preset(name)
