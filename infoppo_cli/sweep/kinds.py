"""How a sweep runs its kinds (``sweepdir/kinds.py``): the values every run holds, and the train options the
sweep sets itself."""

from __future__ import annotations

from infoppo_cli.sweepdir.kinds import ARM_METHODS, SweepKind

HELD_FLAGS: dict[str, str] = {"--gamma": "algo.advantage.gamma", "--lambd": "algo.advantage.lambd"}
"""The train options a sweep may hold, and the OpenRLHF flag whose value the info arm's method
(``infoppo`` in ``presets/methods.toml``) gives each: a γ sweep holds λ at InfoPPO's λ and a λ sweep
γ at InfoPPO's γ, for both arms, so that token-time PPO runs with exactly the info arm's discounting."""

RAY_JOB_ADDRESS = "auto"
"""train's ``--address`` inside a Ray job: join the job's own cluster (``RAY_ADDRESS``), start no Ray."""

SWEEP_CONTROLLED_FIELDS: tuple[str, ...] = (
    "preset",
    "method",
    "seed",
    "output_dir",
    "address",
    "resume",
    "run_name",
)
"""The `infoppo train` request fields the sweep sets itself for each run; a sweep does not take them."""
CONTROLLED_HINTS: dict[str, str] = {
    "seed": " (use --seeds N for seeds 1..N, --first-seed S to start at S)",
    "method": " (use --time info,token)",
    "address": " (runs join the Ray cluster they are launched on; --ray-dashboard submits them to one)",
    "run_name": " (each run is named after its grid point; --run-name-prefix NAME puts NAME- before it)",
}
"""What to use instead of a train option that the sweep sets itself."""


def held_values(spec: SweepKind) -> dict[str, float]:
    """The value of each held option: the info arm's method's (its γ, λ from ``presets/methods.toml``)."""
    from infoppo_cli.train.methods import method  # lazy: pydantic, kept off start-up

    info = method(ARM_METHODS["info"])
    return {flag: float(info.flag(HELD_FLAGS[flag])) for flag in spec.held}
