"""Tables fit the terminal: a table as it is, wrapped at spaces, or folded into ``key: value`` rows, never
split into "(continued)" tables and never with a word, header or cell cut; every table the CLI prints
fits 80 and 60 columns."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Group
from rich.table import Table
from rich.text import Text

from infoppo_cli.cli.console import FittingConsole
from infoppo_cli.cli.fit import fit_table

WIDTHS = (80, 60)


def wide_table(columns: int) -> Table:
    table = Table(title="final metrics")
    table.add_column("run", no_wrap=True)
    for index in range(columns):
        table.add_column(f"metric_number_{index}", justify="right")
    table.add_column("source")
    for run in range(3):
        table.add_row(
            f"qwen3-4b-infoppo-seed{run}",
            *(f"{run}.{index:04d}" for index in range(columns)),
            "presets/llama-3.2-3b-instruct.toml",
        )
    return table


def rendered(renderable, width: int) -> str:
    console = FittingConsole(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def plain(cell) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(str(cell)).plain


def tables_in(renderable) -> list[Table]:
    if isinstance(renderable, Table):
        return [renderable]
    if isinstance(renderable, Group):
        return [table for item in renderable.renderables for table in tables_in(item)]
    return []


def assert_fits(renderable, width: int) -> str:
    """``renderable`` printed at ``width``: no line wider, nothing split or cut, and every word of every
    header and cell on one line of the output."""
    text = rendered(renderable, width)
    assert all(len(line) <= width for line in text.splitlines())
    assert "(continued)" not in text and "…" not in text
    lines = text.splitlines()
    for table in tables_in(renderable):
        for index, column in enumerate(table.columns):
            # folded, a row is named by its first cell alone and a column shows where it has a value
            named = "┏" in text or (index and any(plain(cell).strip() for cell in column.cells))
            for cell in [*([column.header] if named else []), *column.cells]:
                for word in plain(cell).split():
                    if len(word) <= width // 2:  # a longer word may be wider than its column
                        assert any(word in line for line in lines), (word, text)
    return text


@pytest.mark.parametrize(("columns", "width"), [(2, 120), (6, 120), (18, 200), (18, 80), (6, 60)])
def test_every_header_and_cell_is_shown_whole(columns, width):
    assert_fits(wide_table(columns), width)


def test_a_table_that_fits_stays_one_table():
    text = rendered(wide_table(3), 200)
    assert text.count("final metrics") == 1 and "┏" in text


def test_a_table_too_wide_folds_into_key_value_rows():
    text = rendered(wide_table(18), 80)
    lines = text.splitlines()
    assert "┏" not in text and lines[0] == "final metrics"
    start = lines.index("qwen3-4b-infoppo-seed1")
    block = lines[start + 1 : start + 20]
    assert re.fullmatch(r"  metric_number_0: +1\.0000 *", block[0])
    assert re.fullmatch(r"  metric_number_17: +1\.0017 *", block[17])
    assert re.fullmatch(r"  source: +presets/llama-3\.2-3b-instruct\.toml *", block[18])


def test_a_long_prose_column_wraps_at_spaces_in_a_table():
    table = Table(title="methods")
    table.add_column("method", no_wrap=True)
    table.add_column("summary")
    table.add_row("infoppo", "Information-time PPO: info-time GAE and entropy-adaptive clipping " * 3)
    text = assert_fits(table, 60)
    assert "┏" in text and text.count("infoppo") == 1


def test_fitting_leaves_the_table_given_as_it_was():
    table = wide_table(8)
    before = [(column.width, column.overflow, list(column.cells)) for column in table.columns]
    for width in (200, 100, 60):
        fit_table(table, width)
    assert [(column.width, column.overflow, list(column.cells)) for column in table.columns] == before


def test_a_table_without_header_folds_to_key_colon_value():
    table = Table(title="plan", show_header=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    table.add_row("output dir", "/a/very/long/path/" + "x" * 70)
    table.add_row("seed", "42")
    text = rendered(table, 60)
    assert re.search(r"^output dir: +/a/very/long", text, re.M) and re.search(r"^seed: +42 *$", text, re.M)


def test_folded_tables_of_a_group_are_set_apart_and_rows_keep_their_style():
    first, second = wide_table(18), wide_table(18)
    first.rows[1].style = "red"
    folded = fit_table(first, 80)
    assert isinstance(folded, Group)
    text = rendered(Group(first, second), 80)
    assert "\n\nfinal metrics\n" in text  # an empty line between the two folded tables


# Every table the CLI prints, at 80 and 60 columns.


def _presets():
    from infoppo_cli.cli.train import presets_table

    return presets_table()


def _benches():
    from infoppo_cli.cli.eval import bench_table

    return bench_table()


def _eval_result(timeouts: int = 0):
    from infoppo_cli.cli.eval import render_table

    row = {
        "mean@k": 31.25,
        "mean@k_se": 1.234,
        "length_mean": 1234.5,
        "pass@k": 56.7,
        "maj@k": 40.0,
        "truncation_rate": 0.012,
        "no_answer_rate": 0.05,
        "timeouts": timeouts,
        "problems": 30,
        "k": 16,
    }
    return render_table({"benches": {"aime24": row, "math500": {**row, "problems": 500}}, "average": row})


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    from report_runs import finished_sweep

    return finished_sweep(tmp_path_factory.mktemp("fit") / "gamma", "gamma", 2, ["0.999,0.99"])


def _report_tables(sweep_dir: Path) -> list:
    from infoppo_cli.cli.report import final_table, seed_mean_table
    from infoppo_cli.report.health import assess_all
    from infoppo_cli.report.runs import read_inputs
    from infoppo_cli.report.seed_means import seed_mean_rows
    from infoppo_cli.report.tables import eval_benches_of, table_rows

    runs = read_inputs([sweep_dir]).runs
    healths, benches = assess_all(runs), eval_benches_of(runs)
    return [final_table(*table_rows(runs, benches, healths)), seed_mean_table(*seed_mean_rows(runs, benches))]


def _sweep_tables(sweep_dir: Path) -> list:
    from infoppo_cli.cli.sweep_display import plan_table, summary_table
    from infoppo_cli.sweep.grid import build_plan
    from infoppo_cli.sweep.state import open_sweep

    plan = build_plan(
        "gamma", preset="qwen3-4b", out_dir=sweep_dir.parent / "again", values=["0.99"], seeds=2
    )
    state, _ = open_sweep(plan, command=[], settings={})
    return [plan_table(plan, state), summary_table(state, [run.name for run in state.runs])]


def _grade_cases():
    from infoppo_cli.cli.grade import _cases_table

    case = SimpleNamespace(
        where="samples.jsonl:12", gold="\\frac{1}{2}", span="\\boxed{0.5}", correct=True, reason="equal",
        stored_reason="wrong",
    )  # fmt: skip
    return _cases_table([case, case])


def _train_plan():
    from infoppo_cli.cli.train import plan_table
    from infoppo_cli.train.plan import plan_training
    from infoppo_cli.train.request import TrainRequest

    return plan_table(plan_training(TrainRequest(preset="qwen3-4b", eval_bench="none"), strict_data=False))


@pytest.mark.parametrize("width", WIDTHS)
def test_every_cli_table_fits(width, sweep_dir, monkeypatch):
    monkeypatch.chdir("/")  # the plan's paths are the same wherever the checkout sits
    tables = [_presets(), _benches(), _eval_result(), _eval_result(timeouts=2), _grade_cases(), _train_plan()]
    tables += _report_tables(sweep_dir) + _sweep_tables(sweep_dir)
    for table in tables:
        assert_fits(table, width)


def test_the_eval_result_is_a_table_at_80_columns_and_timeouts_show_only_when_there_are_some():
    text = rendered(_eval_result(), 80)
    assert "┏" in text and "Timeouts" not in text
    assert "Timeouts" in rendered(_eval_result(timeouts=3), 200)


def test_presets_fold_at_80_columns_with_cpu_workers_for_the_cpu_preset():
    text = assert_fits(_presets(), 80)
    lines = text.splitlines()
    tiny = lines[lines.index("tiny-cpu") + 1 : lines.index("tiny-cpu") + 8]
    assert any(re.fullmatch(r"  layout: +1 CPU worker\(s\) per model *", line) for line in tiny)
    assert not any("GPU" in line or "vLLM" in line for line in tiny)


def test_the_inspect_summary_fits(monkeypatch):
    from infoppo_cli.cli import console as consoles
    from infoppo_cli.cli.inspect import print_summary

    clock = {
        "model": "/home/someone/runs/qwen3-4b-infoppo-seed42/final",
        "tokens": 123456,
        "entropy": {"mean": 0.71, "p50": 0.2, "p90": 2.1},
        "rho": {"mean": 0.12},
        "rho_above_half": 0.08,
        "gamma_info_T_mean": 0.99987,
        "gamma_token_T_mean": 0.35,
    }
    drift = {"entropy_diff": {"mean": 0.1}, "entropy_abs_diff_mean": 0.2, "rho_abs_diff_mean": 0.05}
    summary = {
        **clock,
        "responses": 64,
        "compare": {**clock, "model": "Qwen/Qwen3-4B-Base", "clock_drift": drift},
    }
    for width in WIDTHS:
        out = FittingConsole(width=width, record=True, file=io.StringIO())
        monkeypatch.setattr(consoles, "console", out)
        print_summary(summary, Path("/tmp/inspect-out"))
        text = out.export_text()
        assert all(len(line) <= width for line in text.splitlines()) and "(continued)" not in text
        assert "0.99987" in text  # Γ_info near 1 is not rounded to 1
