"""Does information time matter where responses are long? The paper's γ and λ ablations on tiny-cpu-long.

The design is fixed here, before any run (docs/training.md, "The long-horizon task"): the
``tiny-cpu-long`` preset (ten-step worked solutions of ~200 tokens, 30 RL steps, held-out accuracy at
temperature 1.0 every 10 steps as Mean@4 over the 200 held-out problems), seeds 1..3, and these stages
in this order, each an ``infoppo sweep`` through the program users run:

1. **key contrast** (always run): γ = 1 (where both clocks coincide; one arm), token-time γ = 0.99 and
   information-time γ = 0.99, all at λ = 1;
2. the rest of the γ grid: γ = 0.999 and 0.98, both clocks, λ = 1;
3. the λ grid: λ = 0.99 and 0.95, both clocks, γ = 1 (λ = 1 at γ = 1 is stage 1's γ = 1 run);
4. the four methods on the task: InfoPPO, PPO, DAPO, DAPO-FT.

A later stage runs only if its runs, at the mean wall time of the runs so far, fit what is left of
``--budget-minutes`` (with all seeds, else with one); the output says which ran. Then it prints, per arm,
held-out accuracy at step 0 and at the last step (mean ± sd over seeds), the last step's response
length and both clocks' discounts, the key contrast's difference with its spread, and draws the
report (``infoppo report`` over every stage) whose figures are copied to ``docs/img/``.

Usage: python benchmarks/bench_ablations.py [--seeds 3] [--budget-minutes 150] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from infoppo_cli.openrlhf_adapter.metrics_log import bench_accuracies
from infoppo_cli.report.runs import read_sweep
from infoppo_cli.rundir import metric_series, read_metrics

PRESET = "tiny-cpu-long"
TRAIN_ARGS = ("--eval-samples", "4")
"""Mean@4 over the 200 held-out problems: 800 responses per evaluation, a standard error of about 1.8
points per run at 50% accuracy, at a quarter of Mean@16's generation time."""
FIGURES = {"accuracy": "tiny_cpu_long_accuracy", "response_length": "tiny_cpu_long_length"}
FIGURES["info_discount"] = "tiny_cpu_long_discounts"


@dataclass(frozen=True)
class Stage:
    name: str
    directory: str
    sweep: tuple[str, ...]
    """``infoppo sweep`` arguments without --seeds and --out."""
    runs_per_seed: int


STAGES = (
    Stage("key contrast", "gamma-key", ("gamma", "--values", "1.0,0.99"), 3),
    Stage("rest of the gamma grid", "gamma-rest", ("gamma", "--values", "0.999,0.98"), 4),
    Stage("lambda grid", "lambda", ("lambda", "--values", "0.99,0.95"), 4),
    Stage("four methods", "methods", ("methods",), 4),
)


def infoppo(*args: str) -> None:
    command = [sys.executable, "-m", "infoppo_cli", *args]
    print("$ infoppo", " ".join(args), flush=True)
    subprocess.run(command, check=True)


def run_stages(out: Path, seeds: int, budget_s: float) -> list[str]:
    """Run the stages that fit; returns the directories of those that ran (or had run before)."""
    started, ran = time.monotonic(), []
    for stage in STAGES:
        left = budget_s - (time.monotonic() - started)
        directory = out / stage.directory
        chosen = seeds if not ran else _seeds_that_fit(stage, seeds, directory, _seconds_per_run(out), left)
        if chosen == 0:
            fits = f"{stage.runs_per_seed} runs per seed do not fit in {left / 60:.0f} min"
            print(f"\n== skipped: {stage.name} ({fits})")
            continue
        print(f"\n== {stage.name}: {stage.runs_per_seed * chosen} runs ({chosen} seed(s))", flush=True)
        infoppo("sweep", *stage.sweep, "--preset", PRESET, "--seeds", str(chosen), "--out", str(directory),
                "--retry-failed", *TRAIN_ARGS)  # fmt: skip
        ran.append(str(directory))
    return ran


def _done_runs(directory: Path) -> list[dict]:
    try:
        runs = json.loads((directory / "sweep.json").read_text(encoding="utf-8"))["runs"]
    except (OSError, ValueError, KeyError):
        return []
    return [run for run in runs if run.get("status") == "done" and run.get("duration_s")]


def _seconds_per_run(out: Path) -> float:
    """The mean wall time of the runs done so far, in every stage (a resumed benchmark counts them too)."""
    durations = [run["duration_s"] for stage in STAGES for run in _done_runs(out / stage.directory)]
    return statistics.fmean(durations) if durations else 0.0


def _seeds_that_fit(stage: Stage, seeds: int, directory: Path, per_run: float, left: float) -> int:
    done = len(_done_runs(directory))
    for count in (seeds, 1):
        if max(0, stage.runs_per_seed * count - done) * per_run <= left:
            return count
    return 0


def accuracy_key(records: list[dict]) -> str:
    keys = {f"eval_{bench}" for r in records for bench in bench_accuracies(r)}
    if len(keys) != 1:
        raise SystemExit(f"expected one in-training benchmark, found {sorted(keys)}")
    return keys.pop()


def last(records: list[dict], key: str) -> float:
    series = metric_series(records, key)
    return series[-1][1] if series else float("nan")


def arm_rows(directories: list[str]) -> dict[str, list[dict[str, float]]]:
    """Per arm (``gamma=0.99 info``), one dict per seed of what the table shows."""
    arms: dict[str, list[dict[str, float]]] = {}
    for directory in directories:
        kind, runs = read_sweep(Path(directory), notes=[])
        for run in runs:
            records = read_metrics(run.path / "metrics.jsonl")
            accuracy = metric_series(records, accuracy_key(records))
            label = f"{kind}={run.value_label} {run.arm}" if run.value_label else run.arm
            arms.setdefault(label, []).append(
                {
                    "start": accuracy[0][1],
                    "end": accuracy[-1][1],
                    "length": last(records, "response_length_mean"),
                    "info": last(records, "info_discount_mean"),
                    "token": last(records, "token_discount_mean"),
                }
            )
    return arms


def mean_sd(values: list[float]) -> str:
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):6.1f} ± {spread:4.1f}"


def table(arms: dict[str, list[dict[str, float]]]) -> str:
    lines = [
        "| arm | seeds | accuracy step 0 (%) | accuracy last step (%) | gain | length (tokens) "
        "| Γ_info | γ^T |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, seeds in arms.items():
        column = {key: [seed[key] for seed in seeds] for key in seeds[0]}
        gains = [s["end"] - s["start"] for s in seeds]
        lines.append(
            f"| {label} | {len(seeds)} | {mean_sd(column['start'])} | {mean_sd(column['end'])} | "
            f"{mean_sd(gains)} | {statistics.fmean(column['length']):.0f} | "
            f"{statistics.fmean(column['info']):.3g} | {statistics.fmean(column['token']):.3g} |"
        )
    return "\n".join(lines)


def key_contrast(arms: dict[str, list[dict[str, float]]]) -> str:
    info, token = arms.get("gamma=0.99 info"), arms.get("gamma=0.99 token")
    if not info or not token:
        return "key contrast: incomplete"
    ends = [s["end"] for s in info], [s["end"] for s in token]
    difference = statistics.fmean(ends[0]) - statistics.fmean(ends[1])
    spread = (
        statistics.variance(ends[0]) / len(ends[0]) + statistics.variance(ends[1]) / len(ends[1])
    ) ** 0.5
    return (
        f"key contrast at γ = 0.99: information time {statistics.fmean(ends[0]):.1f}%, token time "
        f"{statistics.fmean(ends[1]):.1f}% at the last step: difference {difference:+.1f} points "
        f"(standard error {spread:.1f}, {len(ends[0])} and {len(ends[1])} seeds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget-minutes", type=float, default=150.0)
    parser.add_argument("--out", type=Path, default=Path("sweeps/bench-ablations"))
    parser.add_argument("--figures", type=Path, default=Path("docs/img"))
    args = parser.parse_args()

    ran = run_stages(args.out, args.seeds, args.budget_minutes * 60)
    infoppo("report", *ran, "--out", str(args.out / "report"), "--format", "png")
    arms = arm_rows(ran)
    text = f"stages run: {', '.join(Path(d).name for d in ran)}\n\n{table(arms)}\n\n{key_contrast(arms)}\n"
    (args.out / "ablations.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    for stem, name in FIGURES.items():
        figure = args.out / "report" / f"{stem}.png"
        if figure.exists():
            args.figures.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(figure, args.figures / f"{name}.png")
            print(f"figure: {args.figures / name}.png (from {figure.name})")


if __name__ == "__main__":
    main()
