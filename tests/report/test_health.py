"""A report never hides a broken run: where non-finite values begin (or per-step metrics stop), which
value a table cell shows, and the fault table of broken inputs run through the real ``infoppo report``.

The fault rows live here rather than in ``tests/cli/test_bad_inputs.py``: a broken run is data, so the
report succeeds (exit 0) and writes its files; what is checked is the warning naming run and step, the
marked cells, and inputs left untouched.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_runs import finished_sweep, step_row, write_run

from infoppo_cli.cli import main
from infoppo_cli.report.health import Stale, assess, health_notes, missing_steps, plotted_series
from infoppo_cli.report.runs import RunData

# --------------------------------------------------------------------------- where a run broke


def run_of(rows: list[dict], eval_benches: dict | None = None) -> RunData:
    return RunData(name="r", path=Path("r"), steps=rows, eval_benches=eval_benches or {})


def test_nan_from_step_3_to_40_is_a_divergence_at_step_3_and_the_last_value_is_nan() -> None:
    rows = [{"step": 1.0, "reward_mean": 0.4}, {"step": 2.0, "reward_mean": 0.45}]
    rows += [{"step": float(step), "reward_mean": math.nan} for step in range(3, 41)]
    run = run_of(rows)
    health = assess(run)
    assert (health.nonfinite_at, health.nonfinite_last, health.nonfinite_steps) == (3, 40, 38)
    assert health.nonfinite_keys == ("reward_mean",) and health.nonfinite_kind == "NaN"
    assert math.isnan(health.mark(run.last_logged("reward_mean")))  # not 0.45 from step 2
    [note] = health_notes(health)
    assert note.startswith("r: diverged at step 3: reward_mean turned NaN; non-finite to the last step (40)")


def test_a_run_that_recovers_is_still_named_with_the_extent_of_its_non_finite_values() -> None:
    rows = [{"step": float(s), "loss": math.inf if s == 5 else 1.0} for s in range(1, 9)]
    health = assess(run_of(rows))
    assert (health.nonfinite_at, health.nonfinite_last, health.nonfinite_kind) == (5, 5, "infinite")
    assert "non-finite values at 1 step(s), the last at step 5" in health_notes(health)[0]


def test_a_per_step_metric_that_stops_is_a_likely_divergence_and_earlier_values_are_marked() -> None:
    rows = [{"step": 1.0, "reward_mean": 0.4, "eval_aime24": 10.0}, {"step": 2.0, "reward_mean": 0.45}]
    rows += [{"step": float(step)} for step in range(3, 41)]
    run = run_of(rows)
    health = assess(run)
    assert (health.missing_from, health.missing_keys, health.break_step) == (3, ("reward_mean",), 3)
    assert health.mark(run.last_logged("reward_mean")) == Stale(0.45, 2.0)
    assert health.mark(run.last_logged("eval_aime24")) == Stale(10.0, 1.0)
    assert "not logged from step 3 though the run logged steps up to 40" in health_notes(health)[0]
    series = plotted_series(run, "reward_mean")
    assert len(series) == 40 and math.isnan(series[2][1])  # the curve breaks at step 3


def test_sparse_metrics_and_an_eval_before_training_are_not_taken_for_a_break() -> None:
    rows = [{"step": 0.0, "eval_aime24": 5.0}]  # the base model evaluated at step 0
    rows += [
        {"step": float(s), "reward_mean": 0.1 * s} | ({"eval_aime24": 1.0 * s} if s % 5 == 0 else {})
        for s in range(1, 21)
    ]
    run = run_of(rows)
    assert missing_steps(run, "eval_aime24") == [] and missing_steps(run, "reward_mean") == []
    assert not assess(run).broken and assess(run).mark(run.last_logged("eval_aime24")) == 20.0


def test_a_non_finite_final_eval_score_is_kept_and_named() -> None:
    run = run_of([], {"aime24": {"mean@k": math.nan}, "aime25": {"mean@k": 30.0}})
    health = assess(run)
    assert health.eval_nonfinite == ("aime24",) and health.broken
    assert math.isnan(run.final_accuracy("aime24")[0])
    assert health_notes(health) == ["r: the final eval's Mean@k is not finite for aime24"]


@given(
    st.lists(st.floats(-10, 10), min_size=1, max_size=30),
    st.integers(0, 29),
    st.sampled_from([math.nan, math.inf, -math.inf]),
)
def test_the_last_value_is_never_replaced_by_an_earlier_finite_one(values, at, bad) -> None:
    at = min(at, len(values) - 1)
    values = [*values[:at], *[bad] * (len(values) - at)]
    run = run_of([{"step": float(i + 1), "x": value} for i, value in enumerate(values)])
    health = assess(run, per_step_keys=("x",))
    assert health.nonfinite_at == at + 1
    shown = health.mark(run.last_logged("x"))
    assert not isinstance(shown, Stale) and not math.isfinite(shown)


# --------------------------------------------------------------------------- the fault table


def metrics_lines(path: Path, rows: list[dict], encode: Callable[[dict], str] = json.dumps) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "manifest.json").write_text(
        json.dumps({"config": {"method": "infoppo", "model": "Qwen/Qwen3-4B"}, "seed": 1})
    )
    (path / "metrics.jsonl").write_text("".join(encode(row) + "\n" for row in rows))


def diverging(text: str) -> Callable[[Path], Path]:
    """A run of 40 steps whose metrics are ``text`` (a JSON token) from step 3 on."""

    def build(root: Path) -> Path:
        rows = [step_row(step, 0.999, "info", 1) for step in range(1, 41)]
        for row in rows[2:]:
            row.update({key: "@" for key in row if key != "step"})
        metrics_lines(root / "run", rows, lambda row: json.dumps(row).replace('"@"', text))
        return root / "run"

    return build


def writer_dropped_nan(root: Path) -> Path:
    rows = [step_row(step, 0.999, "info", 1) if step < 3 else {"step": step} for step in range(1, 41)]
    metrics_lines(root / "run", rows)
    return root / "run"


def nan_training_eval(root: Path) -> Path:
    rows = [step_row(step, 0.999, "info", 1) for step in range(1, 5)]
    rows[-1]["eval_aime24"] = "NaN"  # the last in-training eval; step 2's was 21
    metrics_lines(root / "run", rows)
    return root / "run"


def nan_final_eval(root: Path) -> Path:
    write_run(root / "run", 0.999, "info", 1)
    (root / "run" / "eval").mkdir()
    (root / "run" / "eval" / "metrics.json").write_text('{"benches": {"aime24": {"mean@k": NaN, "k": 16}}}')
    return root / "run"


def nan_eval_only(root: Path) -> Path:
    (root / "ev").mkdir(parents=True)
    document = {
        "benches": {"aime24": {"mean@k": "NaN", "mean@k_se": None, "k": 16}},
        "settings": {"model": "org/m"},
    }
    (root / "ev" / "metrics.json").write_text(json.dumps(document))
    return root / "ev"


def sweep_with_a_nan_seed(root: Path) -> Path:
    out = finished_sweep(root / "norm", "norm", 2, ["batch"])
    metrics = out / "norm-batch-info-seed2" / "metrics.jsonl"
    lines = metrics.read_text().splitlines()
    lines[-1] = json.dumps({"step": 4, "reward_mean": "NaN"})
    metrics.write_text("\n".join(lines) + "\n")
    return out


def fault(build, broken: str, warning: str, cell: tuple[str, str, str, str], id: str):
    """A broken input, the run the report must name as broken, a fragment of the warning about it, and
    a cell (table file, a value of its row, column, expected text) that shows the break."""
    return pytest.param(build, broken, warning, cell, id=id)


FAULTS = [
    fault(
        diverging('"NaN"'),
        "run",
        "run: diverged at step 3: ",
        ("final_metrics.csv", "run", "reward", "nan"),
        id="nan-strings",
    ),
    fault(
        diverging("NaN"),
        "run",
        "non-finite to the last step (40)",
        ("final_metrics.csv", "run", "steps", "40"),
        id="nan-literals",
    ),
    fault(
        diverging("null"), "run", "turned NaN", ("final_metrics.csv", "run", "diverged_at", "3"), id="nulls"
    ),
    fault(
        diverging('"Infinity"'),
        "run",
        "turned infinite",
        ("final_metrics.csv", "run", "entropy", "inf"),
        id="infinity",
    ),
    fault(
        writer_dropped_nan,
        "run",
        "likely diverged at step 3",
        ("final_metrics.md", "run", "reward", "0.21 (step 2)"),
        id="dropped-by-writer",
    ),
    fault(
        nan_training_eval,
        "run",
        "run: diverged at step 4: eval_aime24",
        ("final_metrics.csv", "run", "aime24", "nan"),
        id="nan-in-training-eval",
    ),
    fault(
        nan_final_eval,
        "run",
        "Mean@k is not finite for aime24",
        ("final_metrics.csv", "run", "aime24", "nan"),
        id="nan-final-eval",
    ),
    fault(
        nan_eval_only,
        "org/m",
        "org/m: the final eval's Mean@k is not finite",
        ("final_metrics.csv", "org/m", "aime24", "nan"),
        id="nan-eval-only",
    ),
    fault(
        sweep_with_a_nan_seed,
        "norm-batch-info-seed2",
        "norm-batch-info-seed2: diverged at step 4",
        ("final_metrics_seed_mean.md", "norm", "reward", "NaN (n=2, 1 not finite)"),
        id="sweep-seed-nan",
    ),
]


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def read_table(path: Path) -> list[dict[str, str]]:
    if path.suffix == ".csv":
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    lines = [line for line in path.read_text().splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [
        dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        for line in lines[1:]
    ]


@pytest.mark.slow  # a whole `infoppo report`, figures included, per row
@pytest.mark.parametrize(("build", "broken", "warning", "cell"), FAULTS)
def test_a_broken_input_is_reported_not_hidden(
    build, broken, warning, cell, tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    inputs = build(tmp_path / "in")
    before = snapshot(tmp_path / "in")
    with pytest.raises(SystemExit) as exited:
        main(shlex.split(f"report {inputs} --format svg --out {tmp_path / 'out'}"))
    captured = capsys.readouterr()
    assert exited.value.code in (0, None) and "Traceback" not in captured.out + captured.err
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert any(warning in line for line in warnings), captured.err
    table, first, column, expected = cell
    row = next(row for row in read_table(tmp_path / "out" / table) if first in row.values())
    assert row[column] == expected
    report_md = (tmp_path / "out" / "report.md").read_text()
    broke = report_md.split("## Runs that broke")[1].split("![")[0]
    assert f"| {broken} |" in broke
    assert snapshot(tmp_path / "in") == before  # the inputs are read, never touched
