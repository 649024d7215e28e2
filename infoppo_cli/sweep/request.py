"""What one ``infoppo sweep`` is asked to do, declared once.

Each field of :class:`SweepRequest` carries its command-line declaration (``infoppo_cli.schema.option``),
from which ``infoppo_cli.cli.options`` builds ``infoppo sweep``'s options (the SLURM options are
:class:`SlurmSettings`' fields, declared here so the command line does not import the SLURM launcher;
the train options every run gets are ``TrainRequest``'s own, under train's names). Where the runs go is
checked here, before anything is planned; :meth:`SweepRequest.plan` turns the request into its grid.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import redact_argv, secrets_in_argv
from infoppo_cli.schema import command_line, option
from infoppo_cli.sweepdir.kinds import KINDS, Value, format_value
from infoppo_cli.train.request import TrainRequest

if TYPE_CHECKING:
    from infoppo_cli.sweep.grid import SweepPlan

LAUNCHERS = ("local", "ray", "slurm")


def _spelled(value: Value) -> str:
    if isinstance(value, tuple):
        return ":".join(f"{v:g}" for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def paper_grids() -> str:
    """Each sweep kind's default grid, spelled as ``--values`` takes it."""
    grids = {name: kind.defaults for name, kind in KINDS.items() if kind.defaults != ((),)}
    return "; ".join(f"{name}: {','.join(map(_spelled, grid))}" for name, grid in grids.items())


@dataclass(frozen=True)
class SweepRequest:
    """The options of ``infoppo sweep`` (its kind is an argument; its SLURM options are
    ``SlurmSettings``; the train options every run gets are ``TrainRequest``'s, with train's names)."""

    preset: str = option("qwen3-4b", "Model preset of every run (train's --preset).", "--preset", "-p")
    values: list[str] | None = option(
        None,
        "Grid values, comma-separated; clip takes EPS_LOW:EPS_HIGH pairs.",
        default_text=f"InfoPPO's ablation grid, {paper_grids()}",
    )
    time: str | None = option(
        None,
        "Arms, comma-separated: info (InfoPPO) and/or token (info-clip: InfoPPO's clip with GAE in "
        "token time, the same gamma/lambda); for components any of ppo, info-gae, info-clip, infoppo; "
        "for methods any of infoppo, ppo, dapo, dapo-ft.",
        default_text="info,token for gamma and lambda; info for clip and norm; all four for components "
        "and methods",
    )
    seeds: int = option(1, "Run N seeds of every grid point: FIRST..FIRST+N-1 (--first-seed).")
    first_seed: int = option(
        1,
        "The first seed of every grid point: more seeds for a study in another --out, or one study "
        "split over machines (seeds 1-3 in one sweep, 4-5 in another).",
        "--first-seed",
    )
    out: Path | None = option(None, "Sweep directory.", "--out", "-o", default_text="sweeps/KIND-PRESET")
    launcher: str | None = option(
        None,
        "Where runs go: local (one after another), ray (Ray jobs at --ray-dashboard) or slurm (a SLURM "
        "job per run via submitit).",
        default_text="ray with --ray-dashboard, else local",
        cli_type=Literal[LAUNCHERS],
    )
    ray_dashboard: str | None = option(
        None,
        "Ray dashboard address (e.g. http://HEAD:8265): submit each run as a Ray job there. (The sweep's "
        "--address before; --address is train's, the Ray cluster a run joins.)",
        default_text="",
    )
    max_parallel: int | None = option(
        None, "Ray or SLURM: at most N runs at once.", default_text="1 on Ray, every run on SLURM"
    )
    final_eval_bench: str | None = option(
        None,
        "After training, run `infoppo eval` on RUN/final with these benchmarks, in eval --bench's forms: "
        "names (e.g. aime24,aime25), NAME=FILE, all, or none. (The sweep's --eval-bench before; "
        "--eval-bench is train's, every run's in-training eval.)",
        default_text="",
    )
    retry_failed: bool = option(False, "Run the sweep's failed runs again.", "--retry-failed")
    force_new_grid: bool = option(
        False, "Run another grid in a sweep directory that holds one (adds its runs).", "--force-new-grid"
    )
    run_name_prefix: str | None = option(
        None,
        "Prefix of every run's name in wandb and TensorBoard: NAME-RUN (RUN: the grid point's name). (The "
        "sweep's --run-name before; --run-name is train's, one run's whole name.)",
        default_text="none: the grid point's name, e.g. gamma-0.999-info-seed1",
    )

    def __post_init__(self) -> None:
        if self.launcher is not None and self.launcher not in LAUNCHERS:
            raise UsageError(f"unknown --launcher {self.launcher!r}; choose one of: {', '.join(LAUNCHERS)}")
        chosen = self.chosen_launcher
        if self.max_parallel is not None and self.max_parallel < 1:
            raise UsageError(f"--max-parallel must be >= 1, got {self.max_parallel}")
        if chosen == "ray" and not self.ray_dashboard:
            raise UsageError(
                "--launcher ray needs --ray-dashboard (the Ray dashboard, e.g. http://HEAD:8265)"
            )
        if chosen != "ray" and self.ray_dashboard:
            raise UsageError(f"--ray-dashboard is for --launcher ray, not {chosen}")
        if self.max_parallel not in (None, 1) and chosen == "local":
            raise UsageError(
                "--max-parallel needs --ray-dashboard or --launcher slurm: local runs go one after another"
            )

    def train_options(self, given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The train options every run gets (``given``: ``TrainRequest`` fields), with the value of every
        secret ``--set`` redacted, and those secrets by environment variable (the runs inherit them; no
        command or record shows them)."""
        options = dict(given)
        overrides = list(options.get("overrides") or [])
        if overrides:
            options["overrides"] = redact_argv(overrides)
        return options, secrets_in_argv(overrides)

    def plan(self, kind: str, train_options: Mapping[str, Any]) -> SweepPlan:
        """The grid of this request's ``kind`` sweep, every run with ``train_options``."""
        from infoppo_cli.sweep.grid import build_plan, parse_eval_benches  # lazy: pydantic, off start-up

        return build_plan(
            kind,
            preset=self.preset,
            out_dir=self.out_dir(kind),
            values=self.values,
            time=self.time,
            seeds=self.seeds,
            first_seed=self.first_seed,
            eval_benches=parse_eval_benches(self.final_eval_bench, train_options.get("benches_file")),
            train_options=train_options,
            run_name_prefix=self.run_name_prefix,
        )

    @property
    def chosen_launcher(self) -> str:
        """``--launcher``, else ray with ``--ray-dashboard``, else local."""
        return self.launcher or ("ray" if self.ray_dashboard else "local")

    def out_dir(self, kind: str) -> Path:
        """``--out``, else ``sweeps/KIND-PRESET``."""
        return self.out if self.out is not None else Path("sweeps") / f"{kind}-{self.preset}"

    def parallel(self, runs: int) -> int:
        """Runs at once: ``--max-parallel``, else every run on SLURM and one elsewhere."""
        return self.max_parallel or (runs if self.chosen_launcher == "slurm" else 1)

    def where(self, parallel: int, slurm: SlurmSettings) -> str:
        """Where the runs go, in words (``as Ray jobs on http://head:8265, at most 3 at once``)."""
        return {
            "local": "locally, one after another",
            "ray": f"as Ray jobs on {self.ray_dashboard}, at most {parallel} at once",
            "slurm": f"as SLURM jobs ({slurm.describe()}), at most {parallel} at once",
        }[self.chosen_launcher]

    def resume_command(
        self, plan: SweepPlan, parallel: int = 1, slurm: SlurmSettings | None = None
    ) -> list[str]:
        """The ``infoppo sweep`` command line that resumes ``plan`` (recorded in ``sweep.json``): this
        request with the plan's values as its options write them, on the same launcher (``slurm``: the
        SLURM settings, for a SLURM sweep), with the plan's train options."""
        chosen = self.chosen_launcher
        resumed = replace(
            self,
            preset=plan.preset,
            values=[",".join(format_value(plan.kind, value) for value in plan.values)]
            if KINDS[plan.kind].flags
            else None,
            time=",".join(plan.arms),
            seeds=plan.seeds,
            first_seed=plan.first_seed,
            out=plan.out_dir,
            launcher="slurm" if chosen == "slurm" else None,
            ray_dashboard=self.ray_dashboard if chosen == "ray" else None,
            max_parallel=None if chosen == "local" else parallel,
            final_eval_bench=",".join(plan.eval_benches) or None,
            retry_failed=False,
            force_new_grid=False,
            run_name_prefix=plan.run_name_prefix,
        )
        launched_by = [slurm] if chosen == "slurm" and slurm is not None else []
        return command_line(
            ("infoppo", "sweep", plan.kind), resumed, *launched_by, (TrainRequest, plan.train_options)
        )


@dataclass(frozen=True)
class SlurmSettings:
    """What every grid point's job asks SLURM for (``--slurm-*`` options)."""

    partition: str | None = option(
        None, "SLURM partition.", "--slurm-partition", default_text="the cluster's"
    )
    time: str = option("48:00:00", "SLURM time limit per run, HH:MM:SS or D-HH:MM:SS.", "--slurm-time")
    nodes: int = option(1, "SLURM nodes per training run (one Ray cluster across them).", "--slurm-nodes")
    gpus_per_node: int = option(8, "GPUs per SLURM node.", "--slurm-gpus-per-node")
    account: str | None = option(None, "SLURM account to charge.", "--slurm-account", default_text="")

    def timeout_minutes(self) -> int:
        return slurm_minutes(self.time)

    def executor_parameters(self, name: str) -> dict[str, Any]:
        """submitit's AutoExecutor parameters (generic names, ``slurm_`` for SLURM-only ones)."""
        parameters: dict[str, Any] = {
            "name": name,
            "timeout_min": self.timeout_minutes(),
            "nodes": self.nodes,
            "gpus_per_node": self.gpus_per_node,
            "tasks_per_node": 1,  # one Ray node per SLURM node
        }
        if self.partition:
            parameters["slurm_partition"] = self.partition
        if self.account:
            parameters["slurm_account"] = self.account
        return parameters

    def describe(self) -> str:
        parts = [f"partition {self.partition or '(cluster default)'}", f"time {self.time}"]
        parts += [f"{self.nodes} node(s) x {self.gpus_per_node} GPU(s)"]
        return ", ".join(parts + ([f"account {self.account}"] if self.account else []))


_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def slurm_minutes(text: str) -> int:
    """Minutes of a SLURM time limit: ``MM``, ``HH:MM:SS`` or ``D-HH[:MM[:SS]]`` (sbatch's formats)."""
    match = _TIME.match(text.strip())
    if not match:
        raise UsageError(f"--slurm-time takes HH:MM:SS or D-HH:MM:SS (sbatch's format), got {text!r}")
    days, first, second, third = (int(group) if group else 0 for group in match.groups())
    if match.group(1) is None and match.group(3) is None:  # MM alone
        minutes = first
    elif match.group(1) is None and match.group(4) is None:  # MM:SS
        minutes = first + (second > 0)
    else:  # [D-]HH:MM[:SS]
        minutes = days * 1440 + first * 60 + second + (third > 0)
    if minutes < 1:
        raise UsageError(f"--slurm-time must be at least one minute, got {text!r}")
    return minutes
