"""The numbers README.md and docs/ quote from the benchmarks are the committed data's: each quoted table is
recomputed here from the per-step CSV the benchmark wrote under benchmarks/results/ (``infoppo report
--csv``), read back as ``infoppo report`` reads it."""

from __future__ import annotations

import functools
import re
import statistics
from pathlib import Path

import pytest

from infoppo_cli.report.labels import SETTING_SYMBOLS
from infoppo_cli.report.raw_data import read_report_inputs

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
METHOD_LABELS = {"InfoPPO": "infoppo", "PPO": "ppo", "DAPO": "dapo", "DAPO-FT": "dapo-ft"}


def accuracy_curves(csv: Path, bench: str) -> dict[str, list[list[tuple[float, float]]]]:
    """Per method, each seed's held-out accuracy curve (step, %)."""
    curves: dict[str, list[list[tuple[float, float]]]] = {}
    for run in read_report_inputs([csv]).runs:
        curves.setdefault(run.method or "-", []).append(run.series(f"eval_{bench}"))
    return curves


def one_decimal(value: float) -> str:
    return f"{value:.1f}"


def test_the_readme_learning_table_is_the_committed_runs():
    """README's "It learns" table: step-0 and last-step accuracy (mean over seeds) and the gain's mean ±
    sd, from benchmarks/results/tiny-cpu-learning.csv (bench_learning.py)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    header = re.search(
        r"^\| method \| step 0 \| step (\d+) \| gain \(mean ± sd, (\d+) seeds\) \|$", readme, re.M
    )
    assert header, "the README's learning table is missing"
    rows = re.findall(
        r"^\| (InfoPPO|PPO|DAPO|DAPO-FT) \| ([\d.]+) \| ([\d.]+) \| \+([\d.]+) ± ([\d.]+) \|$", readme, re.M
    )
    assert sorted(label for label, *_ in rows) == sorted(METHOD_LABELS)
    curves = accuracy_curves(RESULTS / "tiny-cpu-learning.csv", "arithmetic")
    for label, start, end, gain, spread in rows:
        seeds = curves[METHOD_LABELS[label]]
        assert len(seeds) == int(header.group(2)), label
        assert all(curve[0][0] == 0 and curve[-1][0] == int(header.group(1)) for curve in seeds), label
        gains = [curve[-1][1] - curve[0][1] for curve in seeds]
        quoted = (start, end, gain, spread)
        data = (
            statistics.fmean(curve[0][1] for curve in seeds),
            statistics.fmean(curve[-1][1] for curve in seeds),
            statistics.fmean(gains),
            statistics.stdev(gains),
        )
        assert quoted == tuple(map(one_decimal, data)), label


def test_the_readme_s_quickstart_output_is_its_committed_run():
    """The README quotes what its first command printed at the end of a run; the run's per-step records
    are committed beside it, and its step-0 and step-40 held-out accuracy are the quoted ones."""
    import json

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    quoted = re.search(
        r"`arithmetic Mean@16: ([\d.]+) at step 0 -> ([\d.]+) at step (\d+) \(\+([\d.]+)\)[^`]*`, "
        r"every step in `benchmarks/results/(tiny-cpu-infoppo-seed42\.metrics\.jsonl)`",
        readme,
    )
    assert quoted, "the README's quickstart output and its committed records are not quoted"
    records = (RESULTS / quoted.group(5)).read_text(encoding="utf-8").splitlines()
    evals = {
        row["step"]: row["eval_arithmetic"] for row in map(json.loads, records) if "eval_arithmetic" in row
    }
    last = int(quoted.group(3))
    assert max(evals) == last
    assert quoted.groups()[:4] == (
        one_decimal(evals[0]),
        one_decimal(evals[last]),
        str(last),
        one_decimal(evals[last] - evals[0]),
    )


TINY_CPU_ROWS = {
    "InfoPPO (paper's ε 10 / 20)": ("tiny-cpu-learning.csv", lambda run: run.method == "infoppo"),
    "PPO (clip 0.2 / 0.28)": ("tiny-cpu-learning.csv", lambda run: run.method == "ppo"),
    "info-gae: information-time GAE, PPO's clip": (
        "tiny-cpu-clock-and-clip.csv",
        lambda run: run.method == "info-gae",
    ),
    "InfoPPO at ε 1 / 1 (`sweep clip --values 1:1`)": (
        "tiny-cpu-clock-and-clip.csv",
        lambda run: run.kind == "clip",
    ),
}


def _step_mean(run, key: str) -> float:
    return statistics.fmean(value for _, value in run.series(key))


def test_the_tiny_cpu_clip_table_in_the_docs_is_the_committed_runs():
    """docs/training.md's InfoPPO-against-PPO table: each arm's held-out accuracy at steps 0-40 (mean over
    seeds), its mean KL to the old policy and its clipped share (means over steps, then seeds)."""
    docs = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert "| run | 0 | 10 | 20 | 30 | 40 | KL to old | clipped |" in docs
    for label, (csv, chosen) in TINY_CPU_ROWS.items():
        row = re.search(rf"^\| {re.escape(label)} \| (.+) \|$", docs, re.M)
        assert row, f"no row {label!r}"
        *accuracies, kl, clipped = [cell.strip() for cell in row.group(1).split("|")]
        runs = [run for run in read_report_inputs([RESULTS / csv]).runs if chosen(run)]
        assert len(runs) == 3, label
        curves = [dict(run.series("eval_arithmetic")) for run in runs]
        assert accuracies == [
            one_decimal(statistics.fmean(c[step] for c in curves)) for step in (0, 10, 20, 30, 40)
        ]
        assert kl == f"{statistics.fmean(_step_mean(run, 'ppo_kl') for run in runs):.4f}", label
        shares = [_step_mean(run, "clip_frac_upper") + _step_mean(run, "clip_frac_lower") for run in runs]
        assert clipped == f"{100 * statistics.fmean(shares):.2f}%", label


def stability_rows(markdown: str) -> list[tuple[str, str, list[str], str, str]]:
    """(lr, seed, the accuracy curve's numbers, dip, rise) of each row of a stage-0 table."""
    rows = re.findall(
        r"^\| ([\d.e-]+) \| (\d+) \| ([\d. →]+) \| ([\d.]+) \| ([+-][\d.]+) \| (?:ok|no) \|$", markdown, re.M
    )
    return [(lr, seed, curve.split(" → "), dip, rise) for lr, seed, curve, dip, rise in rows]


@pytest.mark.parametrize(
    "csv", sorted((RESULTS / "ablations").glob("stability-lr*.csv")), ids=lambda p: p.stem
)
def test_the_stage_0_table_in_the_docs_is_the_committed_runs(csv: Path):
    """docs/ablations.md quotes each stage-0 run's held-out accuracy at every eval, its largest dip below
    an earlier best and its rise (mean of the last 3 evals minus step 0's), recomputed here."""
    lr = csv.stem.removeprefix("stability-lr")
    quoted = {
        seed: rest
        for rate, seed, *rest in stability_rows((ROOT / "docs" / "ablations.md").read_text())
        if rate == lr
    }
    runs = read_report_inputs([csv]).runs
    assert sorted(quoted) == sorted(str(run.seed) for run in runs)
    for run in runs:
        values = [value for _, value in run.series("eval_chain")]
        curve, dip, rise = quoted[str(run.seed)]
        assert curve == [one_decimal(value) for value in values]
        assert dip == one_decimal(max(max(values[:i]) - values[i] for i in range(1, len(values))))
        assert rise == f"{statistics.fmean(values[-3:]) - values[0]:+.1f}"


def stage_sections(markdown: str) -> dict[str, str]:
    """The text under each ``### `<stage>`...`` heading of docs/ablations.md, by stage name."""
    parts = re.split(r"^### (?:`([\w.-]+)`)?.*$", markdown, flags=re.M)
    return {name: text for name, text in zip(parts[1::2], parts[2::2], strict=True) if name}


ABLATION_DESIGNS = ("ablations", "ablations-shortcut")
"""The designs under benchmarks/ (and their results' directories); docs/ablations.md reports both."""


def committed_stages() -> list[tuple[str, str]]:
    """(design, stage) of each stage of the ablations with at least one seed's CSV committed."""
    seeds = [(design, csv) for design in ABLATION_DESIGNS for csv in (RESULTS / design).glob("*-seed*.csv")]
    return sorted({(design, csv.stem.rsplit("-seed", 1)[0]) for design, csv in seeds})


def seed_runs(design: str, stage: str) -> list:
    """The runs of every committed seed file of ``stage`` (``<stage>-seed<S>.csv``) of ``design``."""
    return [
        run
        for csv in sorted((RESULTS / design).glob(f"{stage}-seed*.csv"))
        for run in read_report_inputs([csv]).runs
    ]


def accuracy_key(run) -> str:
    """The record of the run's held-out accuracy, on its preset's task (``chain`` or ``chain-shortcut``)."""
    (key,) = {key for step in run.steps for key in step if re.fullmatch(r"eval_chain(-shortcut)?", key)}
    return key


def accuracy_curve(run) -> list[float]:
    """The run's held-out accuracy at each eval."""
    return [value for _, value in run.series(accuracy_key(run))]


@pytest.mark.parametrize(("design", "stage"), committed_stages(), ids="/".join)
def test_each_stage_s_curves_in_the_docs_are_its_committed_seeds(design: str, stage: str):
    """docs/ablations.md lists, under the stage's own heading, each committed seed's held-out accuracy
    curve of every arm of the stage, as ``| arm | seed | a → b → ... |`` rows."""
    sections = stage_sections((ROOT / "docs" / "ablations.md").read_text(encoding="utf-8"))
    assert stage in sections, f"docs/ablations.md has no ### `{stage}` section"
    quoted = {
        (arm, int(seed)): curve.split(" → ")
        for arm, seed, curve in re.findall(rf"^\| ({ARM}) \| (\d+) \| ([\d. →]+) \|$", sections[stage], re.M)
    }
    runs = seed_runs(design, stage)
    committed = {
        (arm_label(run, runs), run.seed): [one_decimal(value) for value in accuracy_curve(run)]
        for run in runs
    }
    assert len(committed) == len(runs) and quoted == committed


LENGTH_STEPS = (1, 5, 10, 15, 20, 25, 30)


def test_the_shortcut_stage_s_response_lengths_in_the_docs_are_its_committed_seeds():
    """On `tiny-cpu-shortcut` the model chooses how long to reason: docs/ablations.md lists each committed
    run's mean training response length at steps 1, 5, ..., 30 as ``| arm | seed | n | n | ... |`` rows."""
    section = stage_sections((ROOT / "docs" / "ablations.md").read_text(encoding="utf-8"))[
        "shortcut-clock-0.99"
    ]
    rows = re.findall(
        rf"^\| ({ARM}) \| (\d+) \| ((?:\d+ \| ){{{len(LENGTH_STEPS) - 1}}}\d+) \|$", section, re.M
    )
    quoted = {(arm, int(seed)): lengths.split(" | ") for arm, seed, lengths in rows}
    runs = seed_runs("ablations-shortcut", "shortcut-clock-0.99")
    by_step = {run.name: dict(run.series("response_length_mean")) for run in runs}
    committed = {
        (arm_label(run, runs), run.seed): [f"{by_step[run.name][step]:.0f}" for step in LENGTH_STEPS]
        for run in runs
    }
    assert runs and quoted == committed


ARM = r"[\w-]+(?: [γλ] = [\d.]+)*"
"""An arm's label in docs/ablations.md's tables: its method, then each setting its stage varies."""
GREEK = {"gamma": SETTING_SYMBOLS["gamma"], "lambd": SETTING_SYMBOLS["lambda"]}
"""γ and λ by the name ``RunData.trained`` reads them under, with the report's symbols."""


def arm_label(run, stage_runs: list) -> str:
    """``run``'s method, followed by ``λ = 0.95`` (say) for each of γ and λ that differs among the stage's
    runs of that method, so that the lambda stage's two λ of one method are two arms."""
    same = [other for other in stage_runs if other.method == run.method]
    varied = [name for name in GREEK if len({other.trained(name) for other in same}) > 1]
    return " ".join([run.method, *(f"{GREEK[name]} = {run.trained(name)}" for name in varied)])


DOCS_CONTRASTS = {
    "1. clock, adaptive clip: `infoppo` − `info-clip`": "clock, adaptive clip, γ = 0.99",
    "2. clock, PPO's clip: `info-gae` − `ppo`": "clock, PPO's clip, γ = 0.99",
    "4. adaptive clip, information time: `infoppo` − `info-gae`": (
        "adaptive clip against PPO's, information time, γ = 0.99"
    ),
    "adaptive clip, token time: `info-clip` − `ppo`": "adaptive clip against PPO's, token time, γ = 0.99",
    "InfoPPO against PPO at γ = 0.99: `infoppo` − `ppo`": "InfoPPO against PPO, both at γ = 0.99, λ = 1",
    "3. information time, γ = 0.99 against γ = 1": "information time, γ = 0.99 against γ = 1",
    "1. clock, adaptive clip, γ = 0.999: `infoppo` − `info-clip`": "clock, adaptive clip, γ = 0.999",
    "2. clock, PPO's clip, γ = 0.999: `info-gae` − `ppo`": "clock, PPO's clip, γ = 0.999",
    "3. information time, γ = 0.999 against γ = 1": "information time, γ = 0.999 against γ = 1",
    "adaptive clip, token time, γ = 0.999: `info-clip` − `ppo`": (
        "adaptive clip against PPO's, token time, γ = 0.999"
    ),
    "adaptive clip, information time, γ = 0.999: `infoppo` − `info-gae`": (
        "adaptive clip against PPO's, information time, γ = 0.999"
    ),
    "InfoPPO against PPO at γ = 0.999: `infoppo` − `ppo`": "InfoPPO against PPO, both at γ = 0.999, λ = 1",
}
"""docs/ablations.md's label of each contrast it reads -> its name in the design files (5 seeds each)."""
METHODS_DOCS_CONTRASTS = {
    "5. InfoPPO − PPO, each at its defaults": "InfoPPO against PPO, each at its defaults",
    "5. InfoPPO − DAPO": "InfoPPO against DAPO",
    "5. InfoPPO − DAPO-FT": "InfoPPO against DAPO-FT",
    "5. InfoPPO − PPO, per response generated": (
        "InfoPPO against PPO, each at its defaults, per response generated"
    ),
    "5. InfoPPO − DAPO, per response generated": "InfoPPO against DAPO, per response generated",
    "5. InfoPPO − DAPO-FT, per response generated": "InfoPPO against DAPO-FT, per response generated",
}
"""The same for the methods stage's contrasts (3 seeds each)."""
LAMBDA_DOCS_CONTRASTS = {
    "6. clock, adaptive clip, λ = 0.99: `infoppo` − `info-clip`": "clock, adaptive clip, λ = 0.99 (γ = 1)",
    "6. clock, adaptive clip, λ = 0.95: `infoppo` − `info-clip`": "clock, adaptive clip, λ = 0.95 (γ = 1)",
}
"""The same for the lambda stage's contrasts (3 seeds each)."""
SHORTCUT_DOCS_CONTRASTS = {
    "7. clock, adaptive clip, shortcut accuracy: `infoppo` − `info-clip`": (
        "clock, adaptive clip, γ = 0.99: held-out accuracy"
    ),
    "7. clock, adaptive clip, shortcut length: `infoppo` − `info-clip`": (
        "clock, adaptive clip, γ = 0.99: response length"
    ),
    "7. clock, PPO's clip, shortcut accuracy: `info-gae` − `ppo`": (
        "clock, PPO's clip, γ = 0.99: held-out accuracy"
    ),
    "7. clock, PPO's clip, shortcut length: `info-gae` − `ppo`": (
        "clock, PPO's clip, γ = 0.99: response length"
    ),
}
"""The same for the length ablation's contrasts on `tiny-cpu-shortcut` (5 seeds each)."""
METHOD_ARMS = ("infoppo", "ppo", "dapo", "dapo-ft")
CLOCK_ARMS = ("ppo", "info-gae", "info-clip", "infoppo")


def signed_one_decimal(value: float) -> str:
    return f"{value:+.1f}"


@functools.cache
def clock_stage_runs():
    return read_report_inputs([RESULTS / "ablations" / "clock-0.99.csv"]).runs


def largest_fall(values: list[float]) -> float:
    """The largest fall of an accuracy curve below the best eval before it (0 when it never falls)."""
    return max(0.0, *(max(values[:i]) - values[i] for i in range(1, len(values))))


@functools.cache
def finished_stage_runs(design: str = "ablations"):
    """The runs of every stage of ``design`` whose seeds are merged (``<stage>.csv``), read together, as
    ``bench_ablations.py --design benchmarks/<design>.toml report`` reads them."""
    import tomllib

    stages = tomllib.loads((ROOT / "benchmarks" / f"{design}.toml").read_text(encoding="utf-8"))["stages"]
    merged = [RESULTS / design / f"{stage['name']}.csv" for stage in stages]
    return read_report_inputs([csv for csv in merged if csv.exists()]).runs


CONTRAST_FILES = {
    "ablations": ("ablations", "ablations-exploratory", "ablations-followup"),
    "ablations-shortcut": ("ablations-shortcut",),
}
"""Each design's runs, by the contrast files read on them (the two designs train on different tasks, so a
contrast of one is never computed on the other's runs)."""


def test_the_contrasts_in_the_docs_are_the_committed_runs():
    """Every contrast row docs/ablations.md quotes (the pre-registered ones of benchmarks/ablations.toml,
    the exploratory ones of ablations-exploratory.toml, the follow-ups of ablations-followup.toml and the
    length ablation's of ablations-shortcut.toml): mean difference, 95% t interval and each seed's
    difference, recomputed from the finished stages' merged CSVs of its own design."""
    from infoppo_cli.report.contrasts import contrast_results, read_contrasts

    docs = (ROOT / "docs" / "ablations.md").read_text(encoding="utf-8")
    quoted = re.findall(
        r"^\| ([^|]+) \| (last|last3|auc) \| ([+-][\d.]+) \| \[([+-][\d.]+), ([+-][\d.]+)\] \| ([^|]+) \|$",
        docs,
        re.M,
    )
    labels = DOCS_CONTRASTS | METHODS_DOCS_CONTRASTS | LAMBDA_DOCS_CONTRASTS | SHORTCUT_DOCS_CONTRASTS
    assert {label for label, *_ in quoted} == set(labels)
    results = {}
    for design, files in CONTRAST_FILES.items():
        contrasts = {
            c.name: c for file in files for c in read_contrasts(ROOT / "benchmarks" / f"{file}.toml")
        }
        read = [contrasts[name] for name in labels.values() if name in contrasts]
        results |= {
            result.contrast.name: result for result in contrast_results(finished_stage_runs(design), read)
        }
    for label, metric, mean, low, high, per_seed in quoted:
        difference = next(d for d in results[labels[label]].differences if d.metric == metric)
        seeds = 5 if label in DOCS_CONTRASTS or label in SHORTCUT_DOCS_CONTRASTS else 3
        assert difference.seeds == list(range(1, seeds + 1)), label
        assert mean == signed_one_decimal(difference.mean), (label, metric)
        assert [low, high] == [signed_one_decimal(bound) for bound in difference.interval], (label, metric)
        assert per_seed.split(", ") == [signed_one_decimal(d) for d in difference.differences], (
            label,
            metric,
        )


NO_INFORMATION_CLOCK = ("ppo", "dapo", "dapo-ft")
NO_GAE = ("dapo", "dapo-ft")
"""Arms whose Γ_info (no information time) or γ^T (no GAE: group-normalised advantages) is not theirs."""


def arm_cells(runs: list, arm: str, responses: bool = False, lambd: float | None = None) -> list[str]:
    """The cells of an arm's row in docs/ablations.md's tables of arms: each metric's mean ± standard error
    over seeds, each seed's largest fall, (with ``responses``, the mean over seeds of the responses
    generated in the run,) the last step's Γ_info and γ^T (with ``lambd``, at γ = 1, where both are 1: the
    last step's Σρ and the trace λ keeps over a response in each clock), the mean KL to the old policy."""
    cells = accuracy_cells(runs)
    if responses:
        generated = [sum(value for _, value in run.series("responses_generated")) for run in runs]
        cells.append(f"{statistics.fmean(generated):,.0f}")
    cells.extend(lambda_trace_cells(runs, lambd) if lambd is not None else discount_cells(runs, arm))
    cells.append(one_decimal(mean_kl(runs) * 1e4))
    return cells


def accuracy_cells(runs: list) -> list[str]:
    """Held-out accuracy's ``last``, ``last3`` and ``auc`` (mean ± standard error over the runs), then each
    run's largest fall."""
    cells = curve_cells(runs, accuracy_key(runs[0]), ("last", "last3", "auc"))
    cells.append(", ".join(one_decimal(largest_fall(accuracy_curve(run))) for run in runs))
    return cells


def discount_cells(runs: list, arm: str, from_step_1: bool = False) -> list[str]:
    """Γ_info and γ^T at the last step, averaged over the runs (``-`` where :data:`NO_INFORMATION_CLOCK` or
    :data:`NO_GAE` says the arm has no such discount); with ``from_step_1``, as ``step 1's → the last's``."""
    cells = []
    for key, without in (("info_discount_mean", NO_INFORMATION_CLOCK), ("token_discount_mean", NO_GAE)):
        if arm in without:
            cells.append("-")
            continue
        cell = f"{statistics.fmean(run.last(key) for run in runs):.2f}"
        if from_step_1:
            cell = f"{statistics.fmean(dict(run.series(key))[1] for run in runs):.2f} → {cell}"
        cells.append(cell)
    return cells


def curve_cells(runs: list, key: str, metrics: tuple[str, ...]) -> list[str]:
    """Each of ``metrics`` of the runs' ``key`` curve as its mean ± standard error over the runs."""
    from infoppo_cli.report.contrasts import curve_metrics

    cells = []
    for metric in metrics:
        values = [curve_metrics(run.series(key))[metric] for run in runs]
        cells.append(f"{statistics.fmean(values):.1f} ± {statistics.stdev(values) / len(values) ** 0.5:.1f}")
    return cells


def shortcut_arm_cells(runs: list, arm: str) -> list[str]:
    """The cells of an arm's row in the length ablation's table of arms: held-out accuracy's three metrics,
    each seed's largest fall, the mean response length's ``last3`` and ``auc`` (mean ± standard error), each
    seed's first step whose mean response length passed :data:`LONG_ANSWER` tokens, Γ_info and γ^T at step 1
    and at the last step (the discount a response's reward reaches its first token with, in each clock, as
    the choice of length is being made and once it is made), the mean KL to the old policy."""
    return [
        *accuracy_cells(runs),
        *curve_cells(runs, "response_length_mean", ("last3", "auc")),
        ", ".join(str(first_long_step(run)) for run in runs),
        *discount_cells(runs, arm, from_step_1=True),
        one_decimal(mean_kl(runs) * 1e4),
    ]


LONG_ANSWER = 200
"""Tokens: a response longer than this is the worked-out solution (about 210), not the shortcut (15)."""


def first_long_step(run) -> int:
    """The first step at which the run's mean training response length passed :data:`LONG_ANSWER`."""
    return next(int(step) for step, length in run.series("response_length_mean") if length > LONG_ANSWER)


def lambda_trace_cells(runs: list, lambd: float) -> list[str]:
    """Σρ per response at the last step (mean ρ times mean length, over seeds), then λ^Σρ and λ^T: how much
    of the final reward's advantage GAE's trace carries back to a response's first token in information
    time and in token time."""
    rho_sum = statistics.fmean(run.last("rho_mean") * run.last("response_length_mean") for run in runs)
    length = statistics.fmean(run.last("response_length_mean") for run in runs)
    return [one_decimal(rho_sum), f"{lambd**rho_sum:.2f}", f"{lambd**length:.1e}"]


def clipped_share(runs: list) -> float:
    """The mean over ``runs`` of the mean over steps of the share of tokens clipped (%)."""
    return 100 * statistics.fmean(
        statistics.fmean(
            u + v
            for (_, u), (_, v) in zip(
                run.series("clip_frac_upper"), run.series("clip_frac_lower"), strict=True
            )
        )
        for run in runs
    )


def mean_kl(runs: list) -> float:
    return statistics.fmean(statistics.fmean(v for _, v in run.series("ppo_kl")) for run in runs)


def arm_rows(stage: str) -> dict[str, list[str]]:
    """The rows of the table of arms under the stage's heading in docs/ablations.md, by arm."""
    section = stage_sections((ROOT / "docs" / "ablations.md").read_text(encoding="utf-8"))[stage]
    found = re.findall(rf"^\| ({ARM}) \| ([\d.]+ ± .+) \|$", section, re.M)
    return {arm: cells.split(" | ") for arm, cells in found}


def test_the_gamma_1_stage_s_arm_in_the_docs_is_the_committed_runs():
    runs = sorted(read_report_inputs([RESULTS / "ablations" / "gamma-1.csv"]).runs, key=lambda run: run.seed)
    assert [run.seed for run in runs] == [1, 2, 3, 4, 5] and {run.method for run in runs} == {"infoppo"}
    assert arm_rows("gamma-1") == {"infoppo γ = 1": arm_cells(runs, "infoppo")}


def test_the_lambda_stage_s_arms_in_the_docs_are_the_committed_runs():
    """docs/ablations.md's table of the λ grid's arms (:func:`arm_cells` with Σρ, λ^Σρ and λ^T),
    recomputed from the merged stage CSV."""
    runs = read_report_inputs([RESULTS / "ablations" / "lambda.csv"]).runs
    arms: dict[str, list] = {}
    for run in sorted(runs, key=lambda run: run.seed):
        arms.setdefault(arm_label(run, runs), []).append(run)
    assert sorted(arms) == [f"{m} λ = {x}" for m in ("info-clip", "infoppo") for x in (0.95, 0.99)]
    assert all([run.seed for run in seeds] == [1, 2, 3] for seeds in arms.values())
    expected = {
        arm: arm_cells(seeds, seeds[0].method, lambd=seeds[0].trained("lambd")) for arm, seeds in arms.items()
    }
    assert arm_rows("lambda") == expected
    section = " ".join(
        stage_sections((ROOT / "docs" / "ablations.md").read_text(encoding="utf-8"))["lambda"].split()
    )
    shares = re.search(r"the share of tokens it acted on was ([\d.]+)–([\d.]+)% in every arm", section)
    clipped = [clipped_share(seeds) for seeds in arms.values()]
    assert shares and shares.groups() == (f"{min(clipped):.3f}", f"{max(clipped):.3f}")


def clock_arms_by_seed(runs: list) -> dict[str, list]:
    """A clock stage's runs by arm, each arm's in seed order, every arm with all 5 seeds."""
    arms = {}
    for arm in CLOCK_ARMS:
        arms[arm] = sorted((run for run in runs if run.method == arm), key=lambda run: run.seed)
        assert [run.seed for run in arms[arm]] == [1, 2, 3, 4, 5], arm
    return arms


def test_the_clock_0_999_stage_s_arms_in_the_docs_are_the_committed_runs():
    arms = clock_arms_by_seed(read_report_inputs([RESULTS / "ablations" / "clock-0.999.csv"]).runs)
    assert arm_rows("clock-0.999") == {arm: arm_cells(runs, arm) for arm, runs in arms.items()}


def test_the_methods_stage_s_arms_in_the_docs_are_the_committed_runs():
    """docs/ablations.md's table of the four methods (:func:`arm_cells` with the responses each generated),
    recomputed from the merged stage CSV."""
    runs = read_report_inputs([RESULTS / "ablations" / "methods.csv"]).runs
    arms = {arm: sorted((r for r in runs if r.method == arm), key=lambda r: r.seed) for arm in METHOD_ARMS}
    assert all([run.seed for run in seeds] == [1, 2, 3] for seeds in arms.values())
    assert arm_rows("methods") == {arm: arm_cells(seeds, arm, responses=True) for arm, seeds in arms.items()}


def test_the_clock_stage_s_arms_in_the_docs_are_the_committed_runs():
    """docs/ablations.md's table of the `clock-0.99` arms (:func:`arm_cells`) and the KL ratios its text
    quotes, recomputed from the merged stage CSV."""
    docs = (ROOT / "docs" / "ablations.md").read_text(encoding="utf-8")
    rows = arm_rows("clock-0.99")
    assert sorted(rows) == sorted(CLOCK_ARMS)
    arms = clock_arms_by_seed(clock_stage_runs())
    for arm, runs in arms.items():
        assert rows[arm] == arm_cells(runs, arm), arm
    kl = {arm: mean_kl(runs) for arm, runs in arms.items()}
    ratios = re.search(
        r"KL to the old policy ([\d.]+) times PPO's\.\s+Neither part alone accounts for that "
        r"\(`info-gae` ([\d.]+) times, `info-clip` ([\d.]+) times\)",
        docs,
    )
    assert ratios and list(ratios.groups()) == [
        one_decimal(kl[arm] / kl["ppo"]) for arm in ("infoppo", "info-gae", "info-clip")
    ]
    clipped = [clipped_share(arms[arm]) for arm in CLOCK_ARMS]
    critic = {
        arm: statistics.fmean(
            statistics.fmean(v for _, v in run.series("critic_loss"))
            for run in clock_stage_runs()
            if run.method == arm
        )
        for arm in CLOCK_ARMS
    }
    ratio = (critic["infoppo"] + critic["info-gae"]) / (critic["info-clip"] + critic["ppo"])
    assert f"Its mean loss was {one_decimal(ratio)} times token time's" in " ".join(docs.split())
    shares = re.search(r"the share of\s+tokens it acted on was ([\d.]+)–([\d.]+)% in every arm", docs)
    assert shares and shares.groups() == (f"{min(clipped):.3f}", f"{max(clipped):.3f}")


@pytest.fixture
def ablations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """benchmarks/bench_ablations.py with its results directory in ``tmp_path``."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench_ablations

    monkeypatch.setattr(bench_ablations, "RESULTS", tmp_path)
    return bench_ablations


def split_by_seed(csv: Path, out: Path, stage: str) -> list[int]:
    """``csv``'s runs written one seed per file as the ablation's stages write them
    (``<stage>-seed<S>.csv``, each seed's runs one sweep); returns the seeds."""
    lines = csv.read_text(encoding="utf-8").splitlines(keepends=True)
    comments, (header, *rows) = [x for x in lines if x.startswith("#")], [x for x in lines if x[0] != "#"]
    column = header.split(",").index("seed")
    seeds = sorted({int(row.split(",")[column]) for row in rows})
    sweep = read_report_inputs([csv]).runs[0].sweep
    for seed in seeds:
        mine = "".join(row for row in rows if int(row.split(",")[column]) == seed)
        text = "".join(comments) + header + mine.replace(f",{sweep},", f",{stage}-seed{seed},")
        (out / f"{stage}-seed{seed}.csv").write_text(text, encoding="utf-8")
    return seeds


def test_a_finished_stage_s_seed_files_merge_into_one_sweep_with_the_same_data(ablations, tmp_path):
    committed = RESULTS / "ablations" / "stability-lr0.0001.csv"
    seeds = split_by_seed(committed, tmp_path, "stage")
    merged = read_report_inputs([ablations.merge_stage("stage", len(seeds))])
    original = read_report_inputs([committed])
    assert {run.sweep for run in merged.runs} == {"stage"} and merged.sweep_kinds == {"stage": "methods"}
    assert {run.name: run.steps for run in merged.runs} == {run.name: run.steps for run in original.runs}
    text = (tmp_path / "stage.csv").read_text(encoding="utf-8")
    assert all(f"from {tmp_path / f'stage-seed{seed}.csv'}:" in text for seed in seeds)


def test_stage_0_and_committed_seeds_are_read_not_run_again(ablations, tmp_path, monkeypatch):
    """On a fresh clone the benchmark goes on from the committed files: stage 0's verdicts come from its
    CSVs, and a stage whose seed files are all there is merged without running anything."""
    for lr in ("0.0002", "0.0001"):
        name = f"stability-lr{lr}.csv"
        (tmp_path / name).write_text((RESULTS / "ablations" / name).read_text(encoding="utf-8"))
    ran = []
    monkeypatch.setattr(ablations, "infoppo", lambda *args, **kw: ran.append(args) or False)  # budget spent
    plan = ablations.design(ROOT / "benchmarks" / "ablations.toml")
    assert ablations.stability(plan, tmp_path / "sweeps", deadline=0.0) == 1e-4
    only = {**plan, "stages": [{"name": "stage", "sweep": ["methods"], "seeds": 3}]}
    split_by_seed(RESULTS / "ablations" / "stability-lr0.0001.csv", tmp_path, "stage")
    assert ablations.stages(only, tmp_path / "sweeps", deadline=0.0) and ran == []
    assert (tmp_path / "stage.csv").exists()
    (tmp_path / "stage-seed3.csv").unlink()
    assert not ablations.stages(only, tmp_path / "sweeps", deadline=0.0)
    assert ran and ran[0][ran[0].index("--first-seed") + 1] == "3"


def test_stage_0_runs_a_rate_not_committed_and_judges_it_from_its_exported_csv(
    ablations, tmp_path, monkeypatch
):
    name = "stability-lr0.0002.csv"
    (tmp_path / name).write_text((RESULTS / "ablations" / name).read_text(encoding="utf-8"))
    ran = []

    def sweep(*args, **kw):
        ran.append(args)
        return True

    def export(directory, stem):  # the sweep's raw data, as `infoppo report --csv` writes it
        committed = (RESULTS / "ablations" / f"{stem}.csv").read_text(encoding="utf-8")
        (tmp_path / f"{stem}.csv").write_text(committed, encoding="utf-8")
        return tmp_path / f"{stem}.csv"

    monkeypatch.setattr(ablations, "infoppo", sweep)
    monkeypatch.setattr(ablations, "export", export)
    monkeypatch.setattr(ablations, "diagnosis", lambda directory: "(diagnosis)")
    plan = ablations.design(ROOT / "benchmarks" / "ablations.toml")
    assert ablations.stability(plan, tmp_path / "sweeps", deadline=0.0) == 1e-4
    assert len(ran) == 1 and "actor.adam.lr=0.0001" in ran[0]  # 2e-4 was read, not run
    table = (tmp_path / "stability-lr0.0001.md").read_text(encoding="utf-8")
    assert "(diagnosis)" in table and table.count("| 0.0001 |") == 3


def test_the_report_reads_the_finished_stages_and_draws_each_one_s_figure_for_the_docs(
    ablations, tmp_path, monkeypatch
):
    """`bench_ablations.py report` on a clone where only `clock-0.99` has finished: the design's
    contrasts over it, and its accuracy figure copied to the docs' folder, through the real CLI."""
    (tmp_path / "clock-0.99.csv").write_text(
        (RESULTS / "ablations" / "clock-0.99.csv").read_text(encoding="utf-8"), encoding="utf-8"
    )
    monkeypatch.setattr(ablations, "FIGURES", tmp_path / "img")
    design = ROOT / "benchmarks" / "ablations.toml"
    ablations.report(ablations.design(design), tmp_path / "sweeps", design)
    figure = tmp_path / "img" / "ablations_clock-0.99.png"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ablations.stage_figure(design, "clock-0.99") == figure
    contrasts = (tmp_path / "sweeps" / "report" / "contrasts.md").read_text(encoding="utf-8")
    assert "| clock, adaptive clip, γ = 0.99 | chain | last3 | 5 | +2.742 |" in contrasts
    assert not (tmp_path / "img" / "ablations_clock-0.99-responses.png").exists()


def test_the_methods_stage_is_drawn_against_responses_generated_as_well(ablations, tmp_path, monkeypatch):
    """The methods stage's figure against steps and, since DAPO's steps cost more responses, against
    responses generated (stage 0's PPO runs stand in for the stage's runs)."""
    committed = (RESULTS / "ablations" / "stability-lr0.0001.csv").read_text(encoding="utf-8")
    (tmp_path / "methods.csv").write_text(committed, encoding="utf-8")
    monkeypatch.setattr(ablations, "FIGURES", tmp_path / "img")
    design = ROOT / "benchmarks" / "ablations.toml"
    ablations.report(ablations.design(design), tmp_path / "sweeps", design)
    for figure in ("ablations_methods.png", "ablations_methods-responses.png"):
        assert (tmp_path / "img" / figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", figure
    axis = (tmp_path / "sweeps" / "report" / "methods-responses" / "report.md").read_text(encoding="utf-8")
    assert "X axis: the responses generated up to each step" in axis


def test_the_shortcut_stage_s_arms_and_what_the_docs_say_of_them_are_the_committed_runs():
    """docs/ablations.md's table of the length ablation's arms (:func:`shortcut_arm_cells`), and the
    numbers its reading quotes (when each clock's arms passed 200 tokens, their accuracy at step 5, the
    share of tokens each clip acted on), recomputed from the merged stage CSV."""
    arms = clock_arms_by_seed(finished_stage_runs("ablations-shortcut"))
    assert arm_rows("shortcut-clock-0.99") == {
        arm: shortcut_arm_cells(runs, arm) for arm, runs in arms.items()
    }
    section = " ".join(
        stage_sections((ROOT / "docs" / "ablations.md").read_text(encoding="utf-8"))[
            "shortcut-clock-0.99"
        ].split()
    )

    def means(clock: tuple[str, ...], value, join: str) -> str:
        """The arms' means over seeds of ``value`` (one decimal), smallest first, joined by ``join``."""
        found = sorted(statistics.fmean(value(run) for run in arms[arm]) for arm in clock)
        return join.join(one_decimal(mean) for mean in found)

    def steps(clock: tuple[str, ...]) -> str:
        found = [first_long_step(run) for arm in clock for run in arms[arm]]
        return f"{min(found)}–{max(found)}"

    def step_5(run) -> float:
        return dict(run.series(accuracy_key(run)))[5]

    def shares(clip: tuple[str, ...]) -> str:
        found = sorted(clipped_share(arms[arm]) for arm in clip)
        return f"{found[0]:.3f}–{found[-1]:.3f}"

    information, token = ("info-gae", "infoppo"), ("info-clip", "ppo")
    expected = [
        f"passed a mean length of 200 tokens by step {steps(information)} "
        f"({means(information, first_long_step, ' and ')} on average); token time's runs took until step "
        f"{steps(token)} ({means(token, first_long_step, ' and ')})",
        f"at step 5 information time's arms held {means(information, step_5, '% and ')}% on average against "
        f"token time's {means(token, step_5, '% and ')}%",
        f"adaptive clip acted on {shares(('info-clip', 'infoppo'))}% of tokens in its arms (PPO's clip on "
        f"{shares(('ppo', 'info-gae'))}%)",
    ]
    for sentence in expected:
        assert sentence in section, sentence


def test_the_length_ablation_s_report_draws_its_response_lengths_for_the_docs_as_well(
    ablations, tmp_path, monkeypatch
):
    """The shortcut design contrasts response lengths, so its stage's length figure is copied to the docs'
    folder beside its accuracy figure (the first committed seeds, merged as a finished stage's are)."""
    stage = "shortcut-clock-0.99"
    for csv in sorted((RESULTS / "ablations-shortcut").glob(f"{stage}-seed[123].csv")):
        (tmp_path / csv.name).write_text(csv.read_text(encoding="utf-8"), encoding="utf-8")
    ablations.merge_stage(stage, 3)
    monkeypatch.setattr(ablations, "FIGURES", tmp_path / "img")
    design = ROOT / "benchmarks" / "ablations-shortcut.toml"
    ablations.report(ablations.design(design), tmp_path / "sweeps", design)
    for curve in ("accuracy", "length"):
        figure = ablations.stage_figure(design, stage, curve=curve)
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", curve
    assert sorted(path.name for path in (tmp_path / "img").iterdir()) == [
        f"ablations-shortcut_{stage}-length.png",
        f"ablations-shortcut_{stage}.png",
    ]
    contrasts = (tmp_path / "sweeps" / "report" / "contrasts.md").read_text(encoding="utf-8")
    assert "response length" in contrasts


def test_the_kl_before_infoppo_s_falls_in_the_docs_is_the_committed_runs():
    """The mean KL to the old policy over the five steps before a seed's largest fall (seeds 3 and 5 of
    InfoPPO at γ = 0.99), and seed 2's largest five-step window, as docs/ablations.md quotes them."""
    runs = {run.seed: run for run in clock_stage_runs() if run.method == "infoppo"}

    def window(seed: int, end: float) -> str:
        values = [v for step, v in runs[seed].series("ppo_kl") if end - 5 < step <= end]
        return one_decimal(statistics.fmean(values) * 1e4)

    def fall(seed: int) -> tuple[float, float]:
        curve = runs[seed].series("eval_chain")
        values = [v for _, v in curve]
        return max((max(values[:i]) - values[i], curve[i][0]) for i in range(1, len(values)))

    docs = " ".join((ROOT / "docs" / "ablations.md").read_text(encoding="utf-8").split())
    before_3, before_5 = window(3, fall(3)[1]), window(5, fall(5)[1])
    largest_2 = max((window(2, end) for end in range(5, 31, 5)), key=float)
    assert (
        f"seed 3's and seed 5's falls had mean KLs of {before_3} and {before_5} × 10⁻⁴, but seed 2 took "
        f"five steps at {largest_2} × 10⁻⁴ and fell by no more than {one_decimal(fall(2)[0])} points"
    ) in docs


SETTING = r"[γλ] = [\d.]+|shortcut (?:accuracy|length)"
"""What a contrast row's label of docs/ablations.md names before its pair, and the README's quote of it
after (``at γ = 0.999``, ``on shortcut length``): the setting or the task and curve, the clock-0.99 stage's
accuracy when it names none."""


def test_the_readme_s_clock_stage_numbers_are_the_docs_tables():
    """Each difference the README quotes as (`a` − `b`: `metric` mean [low, high]) is the row of
    docs/ablations.md for that pair and metric, which the tests above recompute from the CSV; and its
    count of InfoPPO's falls is the committed curves'."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    docs = (ROOT / "docs" / "ablations.md").read_text(encoding="utf-8")
    rows = {  # a row at γ = 0.999 or at a λ says so before its pair, and the README's quote "at γ = 0.999"
        (pair, setting or "γ = 0.99", metric): (mean, f"[{low}, {high}]")
        for setting, pair, metric, mean, low, high in re.findall(
            rf"^\| [^|]*?(?:({SETTING}): )?(`[\w-]+` − `[\w-]+`) \| (last|last3|auc) \| ([+-][\d.]+) "
            r"\| \[([+-][\d.]+), ([+-][\d.]+)\]",
            docs,
            re.M,
        )
    }
    quoted = 0
    for pair, setting, body in re.findall(
        rf"\((`[\w-]+` − `[\w-]+`)(?: (?:at|on) ({SETTING}))?: ([^()]+)\)", readme
    ):
        for metric, mean, interval in re.findall(
            r"`(last3|last|auc)` ([+-][\d.]+) (\[[+-][\d.]+, [+-][\d.]+\])", body
        ):
            assert rows[(pair, setting or "γ = 0.99", metric)] == (mean, interval), (pair, setting, metric)
            quoted += 1
    assert quoted >= 6
    every_row = {(metric, mean, interval) for (*_, metric), (mean, interval) in rows.items()}
    every_row |= {  # rows whose label names no `a` − `b` pair (contrast 3: one method at two γ's)
        (metric, mean, f"[{low}, {high}]")
        for metric, mean, low, high in re.findall(
            r"^\| [^|]+ \| (last|last3|auc) \| ([+-][\d.]+) \| \[([+-][\d.]+), ([+-][\d.]+)\]", docs, re.M
        )
    }
    anywhere = re.findall(r"`(last3|last|auc)` ([+-][\d.]+) (\[[+-][\d.]+, [+-][\d.]+\])", readme)
    assert anywhere and all(triple in every_row for triple in anywhere), anywhere
    falls = sorted(
        largest_fall([value for _, value in run.series("eval_chain")])
        for run in clock_stage_runs()
        if run.method == "infoppo"
    )
    big = [fall for fall in falls if fall >= 6]
    stated = re.search(r"(\d) of 5 seeds fell (\d+)–(\d+) points mid-run", readme)
    assert stated and stated.groups() == (str(len(big)), f"{min(big):.0f}", f"{max(big):.0f}")


CHILD = """
import pathlib, signal, sys, time
marker = pathlib.Path(sys.argv[1])
def stop(*_):
    marker.write_text("stopped cleanly")
    sys.exit(130)
signal.signal(signal.SIGINT, stop)
marker.write_text("running")
time.sleep(60)
"""


def test_ctrl_c_lets_the_sweep_stop_cleanly_then_says_how_to_resume_without_a_traceback(tmp_path):
    """Ctrl-C in a terminal reaches the benchmark and its sweep (one process group): the benchmark waits
    for the sweep to stop, then exits 130 with one line."""
    import os
    import signal
    import subprocess
    import sys
    import time

    marker = tmp_path / "child"
    driver = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import bench_ablations; "
        f"bench_ablations.run_stoppable([sys.executable, '-c', {CHILD!r}, {str(marker)!r}], None)"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", driver], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text() == "running") and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert marker.read_text() == "stopped cleanly"
    assert "Traceback" not in stderr and "interrupted: rerun the same command to resume" in stderr
