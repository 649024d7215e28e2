"""The paper's ablations on tiny-cpu-long, as designed before any run in benchmarks/ablations.toml.

Stage 0 (``stability``) chooses the learning rate every later stage shares, by the rule written in the
design; the preset must carry that rate before the other stages run (the script says so and stops
otherwise). Then each stage of ``[[stages]]`` runs seed by seed: seed S is one ``infoppo sweep`` on the
preset (``--seeds 1 --first-seed S``, every arm of the stage), through the program users run, and its
raw per-step data is written with ``infoppo report --csv`` to
``benchmarks/results/<design>/<stage>-seed<S>.csv``, which is committed. Everything resumes, on this
machine and on a fresh clone: a seed whose CSV is committed is not run again (stage 0 likewise reads a
rate's committed CSV instead of running it), and a seed's sweep left in ``--out`` skips its finished
runs and resumes the one it was in. So ``--budget-minutes`` (the default fits a working session on 2
cores) only says when to stop for now; rerun the same command to go on. To stop it sooner: Ctrl-C in its
terminal; started in the background (``... &``, where SIGINT is ignored), send SIGTERM to its running
``infoppo sweep``, which stops its run resumably (the benchmark then stops too). At the end ``infoppo report``
draws the figures and the pre-registered contrasts from the committed files alone.

``clock`` measures the testbed before any run: the warm-started model's information clock (Σρ per
response, Γ_info and γ^T) and the in-training eval's own standard error, on the held-out problems.

A second design, ``--design benchmarks/ablations-shortcut.toml``, runs the length ablation on
tiny-cpu-shortcut (no stage 0 of its own: its preset shares tiny-cpu-long's settings).

Usage: python benchmarks/bench_ablations.py [clock|stability|stages|report] [--budget-minutes 150]
         [--design benchmarks/ablations.toml] [--out sweeps/<design>]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.openrlhf_adapter.metrics_log import bench_accuracies
from infoppo_cli.report.contrasts import in_training_benches
from infoppo_cli.report.raw_data import data_csv_text, read_report_inputs
from infoppo_cli.report.runs import read_sweep
from infoppo_cli.rundir import metric_series, read_metrics

DESIGN = Path(__file__).with_name("ablations.toml")
RESULTS_ROOT = Path(__file__).parent / "results"
RESULTS = RESULTS_ROOT / "ablations"
"""Where a design's CSVs go: ``results/<the design file's stem>/`` (set by :func:`main`)."""
FIGURES = Path(__file__).parent.parent / "docs" / "img"
STOP_GRACE_S = 300
"""How long a sweep stopped at the budget (SIGTERM) may take to leave its runs resumable."""


def design(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def infoppo(*args: str, deadline: float | None = None) -> bool:
    """Run ``infoppo ARGS``; at ``deadline`` (monotonic) it is stopped (SIGTERM, which a sweep takes as
    Ctrl-C), which a sweep leaves resumable. Returns whether it finished; a failure stops the benchmark."""
    print("$ infoppo", " ".join(args), flush=True)
    return run_stoppable([sys.executable, "-m", "infoppo_cli", *args], deadline)


def run_stoppable(command: list[str], deadline: float | None) -> bool:
    """:func:`infoppo`'s body for any ``command`` (one that stops cleanly on SIGTERM and SIGINT)."""
    process = subprocess.Popen(command)
    try:
        code = process.wait(timeout=None if deadline is None else max(1.0, deadline - time.monotonic()))
    except KeyboardInterrupt:  # Ctrl-C reached the sweep too (one process group): let it stop cleanly
        _wait_for_stop(process)
        print("\n== interrupted: rerun the same command to resume", file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    except subprocess.TimeoutExpired:
        print("\n== the budget is spent: stopping the sweep (rerun the same command to resume)", flush=True)
        process.send_signal(signal.SIGTERM)  # a sweep's stop, as Ctrl-C; SIGINT is ignored under `... &`
        _wait_for_stop(process)
        return False
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {code}")
    return True


def _wait_for_stop(process: subprocess.Popen) -> None:
    """Give a stopping sweep :data:`STOP_GRACE_S` to leave its runs resumable, then end it (a second
    Ctrl-C ends the wait at once)."""
    try:
        process.wait(timeout=STOP_GRACE_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        process.terminate()
        process.wait()


def run_shape(plan: dict) -> tuple[str, ...]:
    return ("--steps", str(plan["steps"]), "--eval-every", str(plan["eval_every"]),
            "--eval-samples", str(plan["eval_samples"]))  # fmt: skip


def export(directory: Path, name: str) -> Path:
    """The raw per-step data of a finished stage, beside the other committed results."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    csv = RESULTS / f"{name}.csv"
    infoppo(
        "report", str(directory), "--out", str(directory / "report"), "--format", "png", "--csv", str(csv)
    )
    return csv


# -- the testbed, before any run ----------------------------------------------------------------------

CLOCK_GAMMAS = (0.999, 0.99, 0.98)


def clock(plan: dict) -> str:
    """The warm-started model's clock on the held-out problems (``eval_samples`` responses each at
    temperature 1.0, in rollout batches of 128 for the batch normalisation), and Mean@k's standard error."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from infoppo_cli.data.templates import build_prompt
    from infoppo_cli.grading import grade
    from infoppo_cli.infotime import density_by_batch, info_discount, token_discount, token_entropy
    from infoppo_cli.tasks import ensure_task
    from infoppo_cli.tasks.recipes import task_recipe
    from infoppo_cli.train.presets import preset

    torch.manual_seed(0)
    task = ensure_task(task_recipe(preset(plan["preset"]).task))
    tokenizer = AutoTokenizer.from_pretrained(task.model_dir)
    model = AutoModelForCausalLM.from_pretrained(task.model_dir, dtype=torch.float32).eval()
    rows = [json.loads(line) for line in task.heldout_file.read_text(encoding="utf-8").splitlines()]
    k, per_batch = plan["eval_samples"], 128 // plan["eval_samples"]
    sums, lengths, correct, discounts = [], [], {}, {}
    for first in range(0, len(rows), per_batch):
        batch = rows[first : first + per_batch]
        prompts = [build_prompt(tokenizer, row["problem"], "dapo") for row in batch for _ in range(k)]
        tokenizer.padding_side = "left"
        encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.no_grad():
            out = model.generate(**encoded, do_sample=True, temperature=1.0, top_p=1.0, max_new_tokens=256,
                                 pad_token_id=tokenizer.pad_token_id)  # fmt: skip
            logits = model(out, attention_mask=(out != tokenizer.pad_token_id).long()).logits
        start = encoded["input_ids"].shape[1]
        responses = out[:, start:]
        mask = torch.cumsum((responses == tokenizer.eos_token_id).long(), dim=1)
        mask = ((mask == 0) | ((mask == 1) & (responses == tokenizer.eos_token_id))).float()
        entropy = token_entropy(logits[:, start - 1 : -1].float())
        rho = density_by_batch(entropy, mask, None)
        sums += (rho * mask).sum(1).tolist()
        lengths += mask.sum(1).tolist()
        for gamma in CLOCK_GAMMAS:
            discounts.setdefault(gamma, ([], []))
            discounts[gamma][0].extend(info_discount(rho, mask, gamma).tolist())
            discounts[gamma][1].extend(token_discount(mask, gamma).tolist())
        texts = tokenizer.batch_decode(responses, skip_special_tokens=False)
        for i, text in enumerate(texts):
            row = batch[i // k]
            correct.setdefault(row["id"], []).append(grade(text, row["answer"]).correct)
        print(f"clock: {first + len(batch)}/{len(rows)} problems", flush=True)
    total = torch.tensor(sums, dtype=torch.float64)
    tokens = torch.tensor(lengths, dtype=torch.float64)
    lines = [
        f"{len(sums)} responses of the warm-started model at temperature 1.0 ({k} per held-out problem), "
        f"{tokens.mean():.0f} tokens on average; Σρ per response (batch normalisation over rollout batches "
        f"of 128): mean {total.mean():.1f}, median {total.median():.1f}, 10th-90th percentile "
        f"{total.quantile(0.1):.1f}-{total.quantile(0.9):.1f}.",
        "",
        "| γ | Γ_info = γ^Σρ (mean over responses) | γ^T (mean over responses) |",
        "|---|---|---|",
    ]
    for gamma, (info, token) in discounts.items():
        lines.append(f"| {gamma} | {statistics.fmean(info):.3f} | {statistics.fmean(token):.3g} |")
    per_problem = [100 * statistics.fmean(marks) for marks in correct.values()]
    error = statistics.stdev(per_problem) / len(per_problem) ** 0.5
    lines += ["", f"Mean@{k} of this model: {statistics.fmean(per_problem):.1f}%, standard error of one "
              f"eval {error:.1f} points (the spread of per-problem accuracy over {len(per_problem)} "
              "problems)."]  # fmt: skip
    return "\n".join(lines)


# -- stage 0: the shared learning rate --------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    seed: int
    accuracies: list[tuple[float, float]]
    """(step, held-out accuracy %) of every eval."""
    dip: float
    """The largest fall of an eval below the best eval before it (points)."""
    rise: float
    """The mean of the last 3 evals minus the step-0 eval (points)."""


def verdicts(csv: Path) -> list[Verdict]:
    """Stage 0's verdict on each run of one rate, from its committed CSV."""
    found = []
    for run in read_report_inputs([csv]).runs:
        accuracy = run.series(accuracy_key(run.steps))
        if len(accuracy) < 4:
            raise SystemExit(
                f"{csv}: run {run.name} has {len(accuracy)} evals; the rule needs step 0 and 3 more"
            )
        values = [value for _, value in accuracy]
        dip = max(max(values[:i]) - values[i] for i in range(1, len(values)))
        found.append(Verdict(run.seed or 0, accuracy, dip, statistics.fmean(values[-3:]) - values[0]))
    return sorted(found, key=lambda verdict: verdict.seed)


def passes(verdict: Verdict, rule: dict) -> bool:
    """The rule written in the design: the run rose and did not dip."""
    return verdict.dip <= rule["dip_points"] and verdict.rise >= rule["rise_points"]


def stable(found: list[Verdict], rule: dict) -> bool:
    return all(passes(verdict, rule) for verdict in found)


def stability(plan: dict, out: Path, deadline: float) -> float | None:
    """Stage 0 to its verdict: the chosen actor learning rate (``None`` if the budget ran out first).
    A rate whose CSV is committed is judged from it, without running it again."""
    rule, tried = plan["stability"], {}
    for lr in rule["actor_lrs"]:
        directory, csv = out / f"stability-lr{lr:g}", RESULTS / f"stability-lr{lr:g}.csv"
        ran_now = not csv.exists()
        if ran_now:
            print(f"\n== stage 0: {rule['method']} at actor lr {lr:g}, {rule['seeds']} seeds", flush=True)
            finished = infoppo(
                "sweep", "methods", "--time", rule["method"], "--preset", plan["preset"],
                "--seeds", str(rule["seeds"]), "--out", str(directory), "--retry-failed", *run_shape(plan),
                "--set", f"actor.adam.lr={lr:g}", "--set", f"critic.adam.lr={lr * rule['critic_to_actor']:g}",
                deadline=deadline,
            )  # fmt: skip
            if not finished:
                return None
            export(directory, csv.stem)
        else:
            print(f"== stage 0 at actor lr {lr:g}: committed in {csv}", flush=True)
        tried[lr] = verdicts(csv)
        if ran_now:
            text = f"{stability_table({lr: tried[lr]}, rule)}\n\n{diagnosis(directory)}\n"
            (RESULTS / f"{csv.stem}.md").write_text(text, encoding="utf-8")
            print(text, flush=True)
        if stable(tried[lr], rule):
            return lr
    dipping = {lr: sum(v.dip > rule["dip_points"] for v in found) for lr, found in tried.items()}
    chosen = min(dipping, key=lambda lr: (dipping[lr], lr))
    print(f"no rate met the rule; the fewest dipping seeds: lr {chosen:g} ({dipping[chosen]} dipping)")
    return chosen


def stability_table(tried: dict[float, list[Verdict]], rule: dict) -> str:
    lines = ["| actor lr | seed | held-out accuracy at each eval (%) | largest dip | rise | verdict |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for lr, found in tried.items():
        for v in found:
            curve = " → ".join(f"{value:.1f}" for _, value in v.accuracies)
            verdict = "ok" if passes(v, rule) else "no"
            lines.append(f"| {lr:g} | {v.seed} | {curve} | {v.dip:.1f} | {v.rise:+.1f} | {verdict} |")
    return "\n".join(lines)


DIAGNOSTICS = (
    ("reward_mean", "train reward"),
    ("entropy_mean", "entropy"),
    ("ppo_kl", "KL to old"),
    ("grad_norm", "actor grad norm"),
    ("critic_loss", "critic loss"),
)
"""Per-step records read beside a run's evals, to see what moves before a dip."""


def diagnosis(directory: Path) -> str:
    """Per run, per eval window: held-out mean@k and pass@k at its end, and the window's mean of each of
    :data:`DIAGNOSTICS` (what the trainer did in the steps that led to that eval)."""
    _, runs = read_sweep(directory, notes=[])
    names = " | ".join(label for _, label in DIAGNOSTICS)
    lines = [f"| run | steps | held-out mean@k | pass@k | {names} |", "|---" * (4 + len(DIAGNOSTICS)) + "|"]
    for run in sorted(runs, key=lambda run: run.seed or 0):
        if not (run.path / "metrics.jsonl").exists():
            continue
        records = read_metrics(run.path / "metrics.jsonl")
        key = accuracy_key(records)
        accuracy = dict(metric_series(records, key))
        pass_keys = sorted({name for r in records for name in r if name.startswith(key + "_pass_at_")})
        passes = dict(metric_series(records, pass_keys[0])) if pass_keys else {}
        edges = sorted(accuracy)
        for low, high in zip(edges, edges[1:], strict=False):
            window = [r for r in records if low < r["step"] <= high]
            means = [_mean_of(window, key) for key, _ in DIAGNOSTICS]
            cells = " | ".join("-" if m is None else f"{m:.3g}" for m in means)
            lines.append(f"| seed {run.seed} | {low:.0f}-{high:.0f} | {accuracy[high]:.1f} | "
                         f"{passes.get(high, float('nan')):.1f} | {cells} |")  # fmt: skip
    return "\n".join(lines)


def _mean_of(records: list[dict], key: str) -> float | None:
    values = [r[key] for r in records if isinstance(r.get(key), int | float)]
    return statistics.fmean(values) if values else None


def accuracy_key(records: list[dict[str, float]]) -> str:
    keys = {f"eval_{bench}" for record in records for bench in bench_accuracies(record)}
    if len(keys) != 1:
        raise SystemExit(f"expected one in-training benchmark, found {sorted(keys)}")
    return keys.pop()


def preset_actor_lr(plan: dict) -> float:
    from infoppo_cli.train.presets import preset

    return float(preset(plan["preset"]).openrlhf["actor.adam.lr"])


# -- the stages --------------------------------------------------------------------------------------


def stages(plan: dict, out: Path, deadline: float) -> bool:
    """Run the stages' seeds in order, each unless its CSV is committed, until the budget is spent;
    returns whether every stage has all its seeds."""
    for stage in plan["stages"]:
        name = stage["name"]
        for seed in range(1, stage["seeds"] + 1):
            csv = RESULTS / f"{name}-seed{seed}.csv"
            if csv.exists():
                continue
            print(f"\n== stage {name}, seed {seed} of {stage['seeds']}: {' '.join(stage['sweep'])}")
            directory = out / f"{name}-seed{seed}"
            finished = infoppo(
                "sweep", *stage["sweep"], "--preset", plan["preset"], "--seeds", "1",
                "--first-seed", str(seed), "--out", str(directory), "--retry-failed", *run_shape(plan),
                deadline=deadline,
            )  # fmt: skip
            if not finished:
                return False
            export(directory, csv.stem)
        merge_stage(name, stage["seeds"])
    return True


def merge_stage(name: str, seeds: int) -> Path:
    """A finished stage's seed CSVs as one ``<stage>.csv`` whose runs are one sweep named after the stage,
    so that a figure draws each arm's seeds as one curve with its band; each seed file's provenance is
    kept in the comment lines."""
    inputs = read_report_inputs([RESULTS / f"{name}-seed{seed}.csv" for seed in range(1, seeds + 1)])
    kinds = set(inputs.sweep_kinds.values())
    if len(kinds) != 1:
        raise SystemExit(f"stage {name}: its seeds' sweeps are of kinds {sorted(kinds)}, not one")
    runs = [run.name for run in inputs.runs]
    if len(set(runs)) != len(runs):
        raise SystemExit(f"stage {name}: two of its seed files hold a run of the same name")
    for run in inputs.runs:
        run.sweep = name
    inputs.sweep_kinds = {name: kinds.pop()}
    merged = RESULTS / f"{name}.csv"
    atomic_write_text(merged, data_csv_text(inputs, in_training_benches(inputs.runs)))
    return merged


def report(plan: dict, out: Path, design_file: Path) -> None:
    """Figures and contrasts from the committed CSVs alone (``plan``: ``design_file`` read): one report of
    every finished stage with the design's contrasts, and each finished stage's own report, whose
    accuracy figure (each arm's mean over seeds with its band) is copied to ``docs/img``."""
    names = [stage["name"] for stage in plan["stages"]]
    finished = {name: RESULTS / f"{name}.csv" for name in names if (RESULTS / f"{name}.csv").exists()}
    if not finished:
        raise SystemExit(f"no stage has finished yet: {RESULTS} holds no stage CSV")
    target = out / "report"
    csvs = [str(csv) for csv in finished.values()]
    infoppo("report", *csvs, "--out", str(target), "--format", "png", "--contrasts", str(design_file))
    print(f"report: {target}/report.md; contrasts: {target}/contrasts.md")
    sweeps = {stage["name"]: stage["sweep"][0] for stage in plan["stages"]}
    # a design that contrasts response lengths (the length ablation) has its length figures drawn too
    drawn_curves = {"accuracy": "accuracy.png"}
    if any(contrast.get("curve") == "response_length_mean" for contrast in plan.get("contrasts", [])):
        drawn_curves["length"] = "response_length.png"
    for name, csv in finished.items():
        # methods differ in the responses one step costs (DAPO's dynamic sampling): their stage is
        # drawn against responses generated as well
        axes = ("steps", "responses") if sweeps[name] == "methods" else ("steps",)
        for axis in axes:
            drawn = target / (name if axis == "steps" else f"{name}-{axis}")
            infoppo("report", str(csv), "--out", str(drawn), "--format", "png", "--x", axis)
            for curve, drawing in drawn_curves.items():
                figure = stage_figure(design_file, name, axis, curve)
                figure.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(drawn / drawing, figure)
                print(f"{curve} figure of stage {name} against {axis}: {figure}")


def stage_figure(design_file: Path, stage: str, axis: str = "steps", curve: str = "accuracy") -> Path:
    """Where a finished stage's figure of a curve goes: ``docs/img/<design>_<stage>.png`` for the accuracy
    against steps, with ``-responses`` for the axis of responses generated and ``-length`` for the
    response length (``<design>_<stage>-length.png``)."""
    suffix = "" if axis == "steps" else f"-{axis}"
    suffix += "" if curve == "accuracy" else f"-{curve}"
    return FIGURES / f"{design_file.stem}_{stage}{suffix}.png"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "part", nargs="?", choices=("clock", "stability", "stages", "report"), default="stages"
    )
    parser.add_argument("--budget-minutes", type=float, default=150.0)
    parser.add_argument("--out", type=Path, default=None, help="default: sweeps/<the design's stem>")
    parser.add_argument("--design", type=Path, default=DESIGN)
    args = parser.parse_args()
    global RESULTS
    RESULTS = RESULTS_ROOT / args.design.stem
    args.out = args.out or Path("sweeps") / args.design.stem
    plan, deadline = design(args.design), time.monotonic() + args.budget_minutes * 60
    if args.part == "clock":
        text = clock(plan)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "clock.md").write_text(text + "\n", encoding="utf-8")
        print(text)
        return
    if args.part == "stability":
        if "stability" not in plan:
            raise SystemExit(f"{args.design} has no [stability] stage")
        chosen = stability(plan, args.out, deadline)
        if chosen is not None:
            critic, current = chosen * plan["stability"]["critic_to_actor"], preset_actor_lr(plan)
            print(f"\nchosen actor lr: {chosen:g} (critic {critic:g}); the preset has {current:g}")
        return
    if args.part == "stages" and "stability" in plan:
        chosen = stability(plan, args.out, deadline)
        if chosen is None:
            return
        if preset_actor_lr(plan) != chosen:
            raise SystemExit(
                f"stage 0 chose actor lr {chosen:g} but presets/{plan['preset']}.toml has "
                f"{preset_actor_lr(plan):g}: set it (and the critic's) there, then rerun"
            )
    if args.part == "stages" and not stages(plan, args.out, deadline):
        return
    report(plan, args.out, args.design)


if __name__ == "__main__":
    main()
