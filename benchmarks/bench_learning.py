"""It learns: InfoPPO, PPO, DAPO and DAPO-FT on the tiny CPU preset, several seeds, measured end to end.

Runs ``infoppo sweep methods --preset tiny-cpu`` (the real training path: OpenRLHF's trainer and DeepSpeed
strategy, DeepSpeed's engine on its CPU accelerator, infoppo's experience maker, loss, reward and eval,
OpenRLHF's vLLM engine on vLLM's CPU build generating), then reads each
run's ``metrics.jsonl`` and prints, side by side:

1. held-out accuracy (the preset's in-training eval, Mean@k) at step 0 and at the last step, per run
   and averaged over seeds; target: every method gains at least 15 points;
2. the cost of InfoPPO: wall time per RL step by phase (generation, experience with the old-policy
   forward, training, weight sync), InfoPPO against PPO from the same sweep; target: <= 1.10x;

and draws the report (``infoppo report``) whose accuracy-over-steps figure is copied to ``--figure``; the
runs' per-step data is written with it to ``benchmarks/results/tiny-cpu-learning.csv`` (committed: the
README's table is checked against it by tests/test_results.py).
The sweep resumes where it stopped (its directory records every run).

Usage: python benchmarks/bench_learning.py [--seeds 3] [--methods infoppo,ppo,dapo,dapo-ft] [--out DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from infoppo_cli.openrlhf_adapter.metrics_log import bench_accuracies
from infoppo_cli.report.runs import read_sweep
from infoppo_cli.rundir import metric_number, metric_series, read_metrics

DATA = Path(__file__).parent / "results" / "tiny-cpu-learning.csv"
TARGET_GAIN = 15.0
TARGET_COST = 1.10
PHASES = {
    "generation": "timing/generation",
    "experience (old-policy forward)": "timing/make_experience",
    "training": "timing/ppo_train",
    "weight sync": "timing/broadcast",
    "whole step": "timing/step_total",
}


def infoppo(*args: str) -> None:
    command = [sys.executable, "-m", "infoppo_cli", *args]
    print("$", " ".join(command[2:]), flush=True)
    subprocess.run(command, check=True)


def runs_by_method(sweep: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for run in read_sweep(sweep, notes=[])[1]:
        found.setdefault(run.method or "?", []).append(run.path)
    return found


def accuracy_key(records: list[dict]) -> str:
    keys = {f"eval_{bench}" for r in records for bench in bench_accuracies(r)}
    if len(keys) != 1:
        raise SystemExit(f"expected one in-training benchmark, found {sorted(keys)}")
    return keys.pop()


def gains(run: Path) -> tuple[float, float, int]:
    records = read_metrics(run / "metrics.jsonl")
    key = accuracy_key(records)
    evaluated = metric_series(records, key)
    if not evaluated or evaluated[0][0] != 0:
        raise SystemExit(f"{run}: no step-0 evaluation")
    return evaluated[0][1], evaluated[-1][1], evaluated[-1][0]


def phase_seconds(run: Path) -> dict[str, float]:
    """Median seconds per RL step of each phase (the first step, which warms caches, left out)."""
    records = [r for r in read_metrics(run / "metrics.jsonl") if r.get("step", 0) > 1]
    return {
        phase: statistics.median(metric_number(r[key]) for r in records if key in r)
        for phase, key in PHASES.items()
        if any(key in r for r in records)
    }


def learning_table(methods: dict[str, list[Path]]) -> bool:
    print(f"\nheld-out accuracy (%), step 0 -> last step; target: +{TARGET_GAIN:g} points for every method")
    ok = True
    for method, runs in methods.items():
        deltas = []
        for run in runs:
            start, end, step = gains(run)
            deltas.append(end - start)
            change = f"{start:6.1f} -> {end:6.1f} at step {step:3d}  ({end - start:+.1f})"
            print(f"  {method:8} {run.name:28} {change}")
        mean = statistics.fmean(deltas)
        spread = statistics.stdev(deltas) if len(deltas) > 1 else 0.0
        verdict = "ok" if mean >= TARGET_GAIN else "BELOW TARGET"
        print(f"  {method:8} mean gain {mean:+.1f} +- {spread:.1f} (n={len(deltas)}): {verdict}")
        ok &= mean >= TARGET_GAIN
    return ok


def cost_table(methods: dict[str, list[Path]]) -> bool:
    if "infoppo" not in methods or "ppo" not in methods:
        return True
    info = [phase_seconds(run) for run in methods["infoppo"]]
    ppo = [phase_seconds(run) for run in methods["ppo"]]
    print(
        f"\nseconds per RL step (median over steps, mean over seeds); target: InfoPPO <= {TARGET_COST}x PPO"
    )
    ratio = 1.0
    for phase in PHASES:
        a = statistics.fmean(s[phase] for s in info if phase in s)
        b = statistics.fmean(s[phase] for s in ppo if phase in s)
        print(f"  {phase:32} infoppo {a:7.3f}   ppo {b:7.3f}   ratio {a / b:5.2f}")
        if phase == "whole step":
            ratio = a / b
    print(f"  InfoPPO's step costs {ratio:.2f}x PPO's: {'ok' if ratio <= TARGET_COST else 'ABOVE TARGET'}")
    return ratio <= TARGET_COST


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", default="infoppo,ppo,dapo,dapo-ft")
    parser.add_argument("--out", type=Path, default=Path("sweeps/bench-learning"))
    parser.add_argument("--figure", type=Path, default=Path("docs/img/tiny_cpu_learning.png"))
    args = parser.parse_args()

    sweep = ["sweep", "methods", "--preset", "tiny-cpu", "--time", args.methods, "--seeds", str(args.seeds)]
    infoppo(*sweep, "--out", str(args.out), "--retry-failed")  # resumes: done runs are kept
    infoppo("report", str(args.out), "--out", str(args.out / "report"), "--csv", str(DATA))
    methods = runs_by_method(args.out)
    learned = learning_table(methods)
    cheap = cost_table(methods)
    figure = args.out / "report" / "accuracy.png"  # report's accuracy-over-steps figure
    if figure.exists():
        args.figure.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(figure, args.figure)
        print(f"\nfigure: {args.figure} (from {figure.name})")
    else:
        print(f"\nno figure: {figure} was not drawn")
    print(f"\nlearning target {'met' if learned else 'MISSED'}; cost target {'met' if cheap else 'MISSED'}")


if __name__ == "__main__":
    main()
