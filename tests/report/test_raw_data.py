"""The raw per-step data CSV: written from run and sweep directories, read back as a report's input, the
same tables and figure series from either, and a malformed file refused by file and line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from report_runs import STEPS, finished_sweep, step_row, write_run

from infoppo_cli import __version__
from infoppo_cli.errors import UsageError
from infoppo_cli.report.core import make_report
from infoppo_cli.report.raw_data import IDENTITY_COLUMNS, read_report_inputs

TABLES = (
    "final_metrics.csv",
    "final_metrics.md",
    "final_metrics_seed_mean.csv",
    "final_metrics_seed_mean.md",
    "hparams.csv",
    "report.md",
)


@pytest.fixture(scope="module")
def gamma_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two γ values, both arms, two seeds, one run without a final eval, its command recorded."""
    sweep = finished_sweep(
        tmp_path_factory.mktemp("sweeps") / "gamma", "gamma", 2, ["0.999,0.99"], skip="gamma-0.99-token-seed2"
    )
    record = json.loads((sweep / "sweep.json").read_text())
    record["command"] = ["infoppo", "sweep", "gamma", "--values", "0.999,0.99", "--seeds", "2"]
    (sweep / "sweep.json").write_text(json.dumps(record))
    return sweep


def figure_series(kept: list) -> dict:
    """Every drawn figure's lines (label, x, y) and shaded bands (their outlines), by file stem."""
    series = {}
    for stem, figure in kept:
        axes = []
        for ax in figure.axes:
            lines = [(line.get_label(), list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines]
            bands = [
                collection.get_paths()[0].vertices.tolist()
                for collection in ax.collections
                if collection.get_paths()
            ]
            bars = [(patch.get_x(), patch.get_height()) for patch in ax.patches]
            axes.append((ax.get_xlabel(), ax.get_ylabel(), lines, bands, bars))
        series[stem] = axes
    return series


def rows_of(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_a_report_from_the_csv_has_the_same_tables_and_figure_series(
    gamma_sweep: Path, drawn_figures: list, tmp_path: Path
) -> None:
    data = tmp_path / "data.csv"
    direct = make_report([gamma_sweep], tmp_path / "direct", formats=("png",), data_csv=data)
    from_dirs = figure_series(drawn_figures)
    drawn_figures.clear()
    again = make_report([data], tmp_path / "again", formats=("png",))
    assert figure_series(drawn_figures) == from_dirs
    assert sorted(from_dirs) == sorted(direct.captions) == sorted(again.captions)
    assert "final_accuracy_gamma" in from_dirs  # the sweep's kind came back with its runs
    _, _, lines, bands, _ = from_dirs["accuracy"][0]
    assert len(lines) == 4 and len(bands) == 4 and lines[0][1] == [2.0, 4.0]  # 4 grid points, 2 seeds each
    for name in TABLES:
        assert (tmp_path / "again" / name).read_text() == (tmp_path / "direct" / name).read_text(), name
    assert again.notes == direct.notes == []
    rebuilt = make_report([data], tmp_path / "twice", formats=("png",), data_csv=tmp_path / "twice.csv")
    assert rows_of(tmp_path / "twice.csv") == rows_of(data)  # the CSV of a CSV holds the same rows
    assert rebuilt.columns == direct.columns


def test_the_csv_holds_one_row_per_run_per_step_with_identity_and_blank_unlogged_cells(
    gamma_sweep: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data.csv"
    make_report([gamma_sweep], tmp_path / "r", formats=("png",), data_csv=data)
    rows = rows_of(data)
    assert len(rows) == 8 * len(STEPS)
    header = list(rows[0])
    assert header[: len(IDENTITY_COLUMNS) + 1] == [*IDENTITY_COLUMNS, "step"]
    assert {"eval_aime24", "eval_aime25", "rho_mean", "info_discount_mean", "token_discount_mean"} <= set(
        header
    )
    assert "eval_num_samples" not in header and "eval_aime24_truncated_rate" not in header  # kept small
    assert {"timing/generation", "timing/ppo_train", "timing/step_total"} <= set(header)  # every phase's
    token = {int(row["step"]): row for row in rows if row["run"] == "gamma-0.99-token-seed1"}
    first = token[1]
    assert (first["sweep"], first["kind"], first["method"], first["time"]) == (
        "gamma",
        "gamma",
        "info-clip",
        "token",
    )
    assert (first["value"], first["seed"], first["status"], first["gamma"], first["lambd"]) == (
        "0.99",
        "1",
        "done",
        "0.99",
        "0.99",
    )
    assert first["eval_aime24"] == "" and first["rho_mean"] == ""  # no eval at step 1; token time logs no ρ
    assert float(token[4]["eval_aime24"]) == step_row(4, 0.99, "token", 1)["eval_aime24"]
    assert float(token[3]["reward_mean"]) == step_row(3, 0.99, "token", 1)["reward_mean"]
    assert float(token[3]["timing/generation"]) == step_row(3, 0.99, "token", 1)["timing/generation"]
    assert float(first["final_aime24"]) == 30 + 0.99 + 1 and first["final_aime24_k"] == "16"
    assert {row["final_aime24"] for row in rows if row["run"] == "gamma-0.99-token-seed2"} == {""}


def test_the_comment_lines_name_the_version_the_commits_and_the_commands(
    gamma_sweep: Path, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "mine"
    write_run(run, 0.999, "info", 7)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest |= {"git_commit": "abc123def456", "infoppo_command": "infoppo train --preset tiny-cpu --seed 7"}
    (run / "manifest.json").write_text(json.dumps(manifest))
    data = tmp_path / "data.csv"
    make_report([gamma_sweep, run], tmp_path / "r", formats=("png",), data_csv=data)
    comments = [line for line in data.read_text().splitlines() if line.startswith("# ")]
    assert comments[0].startswith(f"# infoppo {__version__} report --csv")
    assert "# trained at commit abc123def456: mine" in comments
    assert any(
        line.startswith("# trained at commit unknown: gamma/gamma-0.999-info-seed1, ") for line in comments
    )
    assert "# sweep gamma: infoppo sweep gamma --values 0.999,0.99 --seeds 2" in comments
    assert "# run mine: infoppo train --preset tiny-cpu --seed 7" in comments
    again = tmp_path / "again.csv"
    make_report([data], tmp_path / "r2", formats=("png",), data_csv=again)  # provenance passed on
    assert f"# from {data}:" in again.read_text() and "#   run mine: infoppo train" in again.read_text()


def test_csv_and_directories_mix_and_a_run_without_steps_keeps_its_final_eval(tmp_path: Path) -> None:
    evaluated = tmp_path / "evals" / "base"
    evaluated.mkdir(parents=True)
    body = {"aime24": {"mean@k": 25.0, "mean@k_se": 1.5, "k": 16}}
    (evaluated / "metrics.json").write_text(json.dumps({"benches": body, "settings": {"model": "org/base"}}))
    data = tmp_path / "evals.csv"
    make_report([evaluated], tmp_path / "r", formats=("png",), data_csv=data)
    [row] = rows_of(data)
    assert row["step"] == "" and row["final_aime24"] == "25.0" and row["final_aime24_se"] == "1.5"
    run = tmp_path / "runs" / "trained"
    write_run(run, 0.999, "info", 1)
    inputs = read_report_inputs([data, run])
    assert [r.name for r in inputs.runs] == ["org/base", "trained"]
    base = inputs.runs[0]
    assert base.eval_benches == {"aime24": body["aime24"]} and base.eval_only and base.data_file == data


def write_csv(path: Path, header: str, *rows: str) -> Path:
    path.write_text("# made by hand\n" + "\n".join([header, *rows]) + "\n")
    return path


HEADER = "run,sweep,kind,method,time,value,seed,status,gamma,lambd,model,step,reward_mean"


@pytest.mark.parametrize(
    ("header", "rows", "message"),
    [
        (HEADER.replace(",seed", ""), [], "line 2: missing column(s) seed"),
        (
            HEADER,
            ["r,,,ppo,,,1,done,1.0,1.0,,1,high"],
            "line 3: column reward_mean holds 'high', not a number",
        ),
        (HEADER, ["r,,,ppo,,,one,done,1.0,1.0,,1,0.5"], "line 3: column seed holds 'one', not an integer"),
        (
            HEADER,
            [
                "r,,,ppo,,,1,done,1.0,1.0,,1,0.5",
                "r,,,ppo,,,1,done,1.0,1.0,,2,0.6",
                "r,,,ppo,,,1,done,1.0,1.0,,1,0.7",
            ],
            "line 5: run r has step 1 (also line 3): one row per run per step",
        ),
        (
            HEADER,
            ["r,,,ppo,,,1,done,1.0,1.0,,1,0.5", "r,,,ppo,,,1,failed,1.0,1.0,,2,0.6"],
            "line 4: run r has status 'failed' here and 'done' on line 3",
        ),
        (HEADER, ["r,,,ppo,,,1,done,1.0,1.0,,1"], "line 3: 12 cells, the header has 13"),
    ],
    ids=["missing-column", "not-a-number", "seed", "duplicate-step", "identity-changes", "short-row"],
)
def test_a_malformed_csv_is_refused_naming_file_and_line(
    tmp_path: Path, header: str, rows: list[str], message: str
) -> None:
    data = write_csv(tmp_path / "bad.csv", header, *rows)
    with pytest.raises(UsageError, match=rf"^{data} {message}".replace("(", r"\(").replace(")", r"\)")):
        read_report_inputs([data])


def test_the_same_run_name_in_two_sweeps_is_two_runs(tmp_path: Path) -> None:
    rows = ["r,s1,,ppo,,,1,done,,,,1,0.5", "r,s2,,ppo,,,1,done,,,,1,0.7"]
    runs = read_report_inputs([write_csv(tmp_path / "two.csv", HEADER, *rows)]).runs
    assert [(run.sweep, run.steps) for run in runs] == [
        ("s1", [{"step": 1.0, "reward_mean": 0.5}]),
        ("s2", [{"step": 1.0, "reward_mean": 0.7}]),
    ]


def test_a_missing_csv_or_a_headerless_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file: .*absent.csv"):
        read_report_inputs([tmp_path / "absent.csv"])
    (tmp_path / "empty.csv").write_text("# only a comment\n")
    with pytest.raises(UsageError, match="empty.csv has no header line"):
        read_report_inputs([tmp_path / "empty.csv"])
