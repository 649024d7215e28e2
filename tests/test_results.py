"""The numbers README.md and docs/ quote from the benchmarks are the committed data's: each quoted table is
recomputed here from the per-step CSV the benchmark wrote under benchmarks/results/ (``infoppo report
--csv``), read back as ``infoppo report`` reads it."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

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


def test_the_clock_stage_s_curves_in_the_docs_are_the_committed_seeds():
    """docs/ablations.md lists each committed seed's held-out accuracy curve of `clock-0.99`, every arm."""
    docs = (ROOT / "docs" / "ablations.md").read_text(encoding="utf-8")
    quoted = {
        (arm, int(seed)): curve.split(" → ")
        for arm, seed, curve in re.findall(
            r"^\| (ppo|info-gae|info-clip|infoppo) \| (\d) \| ([\d. →]+) \|$", docs, re.M
        )
    }
    committed = {}
    for csv in sorted((RESULTS / "ablations").glob("clock-0.99-seed*.csv")):
        for run in read_report_inputs([csv]).runs:
            committed[(run.method, run.seed)] = [one_decimal(value) for _, value in run.series("eval_chain")]
    assert committed and quoted == committed


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
