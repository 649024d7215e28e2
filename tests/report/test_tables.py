"""Table cells: non-finite values as they are, values from before a break with their step, standard CSV;
which logged keys are benchmarks, and their titles."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from user_benches import MINE_TOML

from infoppo_cli.errors import UsageError
from infoppo_cli.report.health import Stale
from infoppo_cli.report.runs import RunData
from infoppo_cli.report.tables import (
    bench_titles,
    cell_text,
    csv_cell,
    drop_empty_columns,
    eval_benches_of,
    table_csv,
)


@pytest.mark.parametrize(
    ("value", "text", "csv_text"),
    [
        (None, "-", ""),
        (0.123456, "0.1235", "0.123456"),
        (math.nan, "NaN", "nan"),
        (math.inf, "inf", "inf"),
        (-math.inf, "-inf", "-inf"),
        (Stale(0.45, 2.0), "0.45 (step 2)", "0.45"),
        ("infoppo", "infoppo", "infoppo"),
        (3, "3", "3"),
        (0.99996, "0.99996", "0.99996"),  # a discount just below 1 never reads as 1
        (0.9999999, "0.9999999", "0.9999999"),
        (1.0, "1", "1.0"),
    ],
)
def test_a_cell_shows_what_was_logged(value, text: str, csv_text: str) -> None:
    assert cell_text(value) == text
    assert str(csv_cell(value)) == csv_text


def test_csv_cells_read_back_as_the_numbers_written() -> None:
    text = table_csv(["run", "reward"], [["a", math.nan], ["b", 1 / 3], ["c", None]])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert math.isnan(float(rows[0]["reward"])) and float(rows[1]["reward"]) == 1 / 3
    assert rows[2]["reward"] == ""


def test_columns_empty_for_every_row_are_left_out_but_the_run_is_kept() -> None:
    columns, rows = drop_empty_columns(
        ["run", "steps", "aime24"], [[None, None, 30.0], ["b", None, math.nan]]
    )
    assert columns == ["run", "aime24"] and rows[0] == [None, 30.0]


@pytest.fixture
def benches_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(MINE_TOML, encoding="utf-8")
    return path


def logging_run(*rows: dict[str, float]) -> RunData:
    return RunData(name="r", path=Path("r"), steps=list(rows))


def test_a_user_benchmark_counts_once_its_benches_file_is_given(benches_file: Path) -> None:
    run = logging_run({"step": 1.0, "eval_mine": 40.0, "eval_aime24": 30.0, "eval_num_samples": 480.0})
    assert eval_benches_of([run]) == ["aime24"]
    assert eval_benches_of([run], benches_file) == ["aime24", "mine"]
    assert eval_benches_of([run], str(benches_file)) == ["aime24", "mine"]


def test_the_mean_over_benchmarks_is_never_a_benchmark(tmp_path: Path) -> None:
    run = logging_run(
        {"step": 0.0, "eval_aime25": 20.0, "eval_aime25_pass1": 0.2, "eval_mean_over_benches": 0.2},
        {"step": 2.0, "eval_aime25": 30.0, "eval_aime25_pass1": 0.3, "eval_mean_over_benches": 0.3},
    )
    assert eval_benches_of([run]) == ["aime25"]
    # even where a benches file gives a benchmark that name, the trainer's key is not its accuracy
    clash = tmp_path / "clash.toml"
    clash.write_text(MINE_TOML.replace("[mine]", "[mean_over_benches]"), encoding="utf-8")
    assert eval_benches_of([run], clash) == ["aime25"]
    now = logging_run(
        {"step": 2.0, "eval_aime25": 30.0, "eval_aime25_pass1": 0.3, "eval_mean_accuracy_pct": 30.0}
    )
    clash.write_text(MINE_TOML.replace("[mine]", "[mean_accuracy_pct]"), encoding="utf-8")
    assert eval_benches_of([now], clash) == ["aime25"]


def test_a_bad_benches_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="missing.toml: no such file"):
        eval_benches_of([logging_run()], tmp_path / "missing.toml")


def test_captions_name_each_benchmark_by_its_registry_title(benches_file: Path) -> None:
    assert bench_titles(["aime24", "mine"], benches_file) == (
        " Benchmarks: aime24 = AIME 2024 (I + II); mine = My own set."
    )
    assert bench_titles(["mine"]) == ""  # unknown without its file: no title beyond the name
    assert bench_titles([]) == ""


def test_hparams_name_every_method_setting_of_a_run(tmp_path: Path) -> None:
    """γ, λ, the clip, the learning rates and the run's length come from its manifest (they were missing)."""
    import json

    from infoppo_cli.report.runs import read_run
    from infoppo_cli.report.tables import hparams_rows

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text('{"step": 1, "policy_loss": 0.1}\n')
    flags = {
        "algo.advantage.gamma": 0.999,
        "algo.advantage.lambd": 0.99,
        "actor.adam.lr": 1e-6,
        "critic.adam.lr": 2e-6,
        "actor.eps_clip_low_high": [0.2, 0.28],
        "train.seed": 3,
    }
    config = {
        "method": "infoppo",
        "model": "m",
        "openrlhf_flags": flags,
        "infotime": {"eps_low_info": 10.0, "eps_high_info": 20.0, "norm": "batch", "rl_steps": 40},
    }
    (run_dir / "manifest.json").write_text(json.dumps({"config": config, "seed": 3, "status": "finished"}))
    columns, rows = hparams_rows([read_run(run_dir, [])], [])
    row = dict(zip(columns, rows[0], strict=True))
    assert (row["gamma"], row["lambda"], row["actor-lr"], row["critic-lr"]) == (0.999, 0.99, 1e-6, 2e-6)
    assert (row["eps-low-info"], row["eps-high-info"], row["norm"], row["steps"]) == (10.0, 20.0, "batch", 40)
    assert row["clip"] == "0.2/0.28" and row["seed"] == 3


def _run_dir(tmp_path: Path, name: str, status: str, lines: list[dict]) -> Path:
    import json

    run_dir = tmp_path / name
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = {"method": "dapo", "model": "m", "openrlhf_flags": {}, "infotime": {"rl_steps": 2}}
    (run_dir / "manifest.json").write_text(json.dumps({"config": config, "seed": 1, "status": status}))
    return run_dir


def test_an_accuracy_that_is_not_the_runs_last_eval_says_its_step_and_the_runs_status(tmp_path: Path) -> None:
    """A run that failed at its final eval showed its step-0 eval as its accuracy, unmarked."""
    from infoppo_cli.report.runs import read_run
    from infoppo_cli.report.tables import markdown_table, table_rows

    step0 = {"step": 0, "eval_arithmetic": 32.69, "eval_arithmetic_reward_mean": -0.35}
    failed = _run_dir(tmp_path, "failed", "failed", [step0, {"step": 1, "policy_loss": 0.1}])
    early = _run_dir(tmp_path, "early", "finished", [step0, {"step": 1, "policy_loss": 0.1}])
    ended = {"step": 1, "policy_loss": 0.1, "eval_arithmetic": 40.0, "eval_arithmetic_reward_mean": -0.2}
    cut = _run_dir(tmp_path, "cut", "interrupted", [step0, ended])
    done = _run_dir(tmp_path, "done", "finished", [step0, ended])
    runs = [read_run(path, []) for path in (failed, early, cut, done)]
    assert eval_benches_of(runs) == ["arithmetic"]  # its mean reward names it a benchmark
    columns, rows = table_rows(runs, ["arithmetic"])
    cells = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    shown = {name: cell_text(cell["arithmetic"]) for name, cell in cells.items()}
    assert shown == {
        "failed": "32.69 (step 0; run failed)",
        "early": "32.69 (step 0)",
        "cut": "40 (step 1; run interrupted)",
        "done": "40",
    }
    assert cells["failed"]["status"] == "failed" and cells["done"]["status"] == "finished"
    assert "32.69 (step 0; run failed)" in "\n".join(markdown_table(columns, rows))
    assert csv_cell(cells["failed"]["arithmetic"]) == "32.69"  # the CSV keeps the number


def test_an_old_run_s_eval_keys_still_name_its_benchmarks() -> None:
    run = logging_run({"step": 2.0, "eval_arith": 30.0, "eval_arith_pass1": 0.3})
    assert eval_benches_of([run]) == ["arith"]
