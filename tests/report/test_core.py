"""Reports from synthetic sweeps: every figure in every format, report.md, the tables, hparams export."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_process import run_infoppo
from PIL import Image
from report_runs import STEPS, finished_sweep, step_row, write_run
from user_benches import MINE_TOML

from infoppo_cli.errors import UsageError
from infoppo_cli.report.core import Report, make_report, parse_formats
from infoppo_cli.report.figures import CURVE_FIGURES, DPI, PANEL_INCHES
from infoppo_cli.report.runs import read_inputs
from infoppo_cli.report.tables import write_tensorboard_hparams


@pytest.fixture(scope="module")
def gamma_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-value, two-arm, two-seed gamma sweep whose runs all finished (one eval missing)."""
    root = tmp_path_factory.mktemp("sweeps")
    return finished_sweep(root / "gamma", "gamma", 2, ["0.999,0.99"], skip="gamma-0.99-token-seed2")


@pytest.fixture(scope="module")
def png_report(gamma_sweep: Path, tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The sweep's report with PNG figures only (drawing every format is tested once)."""
    return make_report([gamma_sweep], tmp_path_factory.mktemp("report"), formats=("png",))


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="") as handle:
        return {row["run"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_every_figure_is_written_in_every_format_at_300_dpi_and_column_width(
    gamma_sweep: Path, tmp_path: Path
) -> None:
    report = make_report([gamma_sweep], tmp_path / "report")
    stems = ["accuracy", *(spec.stem for spec in CURVE_FIGURES), "final_accuracy_gamma"]
    assert sorted(path.name for path in report.figures) == sorted(
        f"{stem}.{fmt}" for stem in stems for fmt in ("png", "pdf", "svg")
    )
    panels = {spec.stem: len(spec.panels) for spec in CURVE_FIGURES} | {
        "accuracy": 2,
        "final_accuracy_gamma": 2,
    }
    for stem in stems:
        image = Image.open(tmp_path / "report" / f"{stem}.png")
        assert image.size[0] == round(PANEL_INCHES[0] * panels[stem] * DPI)
        assert (
            round(PANEL_INCHES[1] * DPI) <= image.size[1] <= round((PANEL_INCHES[1] + 1) * DPI)
        )  # + legend rows
        assert image.info["dpi"] == pytest.approx((DPI, DPI), abs=0.5)
        ink = float((np.asarray(image.convert("L"), dtype=float) < 250).mean())
        assert 0.01 < ink < 0.9, f"{stem} looks empty or black ({ink:.3f})"
        pdf = (tmp_path / "report" / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType text
        svg = (tmp_path / "report" / f"{stem}.svg").read_text()
        assert "<text" in svg and "training step" in svg or stem.startswith("final")


def test_formats_are_chosen_and_checked(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"step": 1, "response_length_mean": 900}\n')
    report = make_report([run], tmp_path / "svg-only", formats=parse_formats("svg"))
    assert [path.name for path in report.figures] == ["response_length.svg"]
    assert "![response_length](response_length.svg)" in report.report_md.read_text()
    assert parse_formats("PNG, pdf,png") == ("png", "pdf")
    for bad in ("jpg", "", "png,eps"):
        with pytest.raises(UsageError, match="unknown --format"):
            parse_formats(bad)


def test_report_md_embeds_every_figure_with_a_caption_and_the_final_table(png_report: Report) -> None:
    report = png_report
    text = report.report_md.read_text()
    for number, stem in enumerate(report.captions, start=1):
        assert f"![{stem}]({stem}.png)" in text
        assert f"*Figure {number}: {report.captions[stem]}*" in text
        assert (report.out_dir / f"{stem}.png").exists()
    assert (
        "shaded: 95% t interval over seeds" in report.captions["accuracy"]
        and "error bars: 95% t interval over seeds, one point per seed"
        in report.captions["final_accuracy_gamma"]
    )
    assert "Γ_info(0,T)" in report.captions["info_discount"] and "γ^T" in report.captions["info_discount"]
    assert "| gamma-0.999-info-seed2 | infoppo | gamma | 0.999 | info | 2 | done | 4 |" in text


def test_table_holds_the_last_logged_values_and_final_accuracies(png_report: Report) -> None:
    report = png_report
    rows = read_csv(report.table_csv)
    assert len(rows) == 8
    info = rows["gamma-0.999-info-seed2"]
    last = step_row(STEPS[-1], 0.999, "info", 2)
    assert info["sweep"] == "gamma" and info["value"] == "0.999" and info["arm"] == "info"
    assert info["seed"] == "2" and info["status"] == "done" and info["steps"] == "4"
    for column, key in [("reward", "reward_mean"), ("length", "response_length_mean"), ("rho", "rho_mean")]:
        assert float(info[column]) == last[key]
    assert float(info["Gamma_info"]) == last["info_discount_mean"]
    assert float(info["Gamma_token"]) == pytest.approx(last["token_discount_mean"])  # both clocks
    assert float(info["aime24"]) == 30 + 0.999 + 2 + 3  # the final eval's mean@k wins over training evals
    assert float(info["aime25"]) == last["eval_aime25"]  # only measured during training
    assert info["accuracy_from"] == "eval+training"
    token = rows["gamma-0.99-token-seed2"]
    assert token["rho"] == "" and token["Gamma_info"] == ""  # token time logs no rho
    assert float(token["aime24"]) == 10.0 * 4 + 2 and token["accuracy_from"] == "training"
    assert report.table_md.read_text().startswith(
        "| run | method | sweep | value | arm | seed | status | steps | reward"
    )
    assert "diverged_at" not in report.columns and "model" not in report.columns  # empty for every run


def test_hparams_csv_and_tensorboard_export_hold_every_run_with_its_parameters(
    png_report: Report, gamma_sweep: Path
) -> None:
    report = png_report
    rows = read_csv(report.hparams_csv)
    assert len(rows) == 8
    row = rows["gamma-0.99-token-seed1"]
    assert (row["gamma"], row["lambd"], row["method"], row["seed"]) == ("0.99", "0.99", "info-clip", "1")
    assert float(row["aime24"]) == 30 + 0.99 + 1
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(report.out_dir / "tensorboard_hparams" / "gamma-0.99-token-seed1"))
    events.Reload()
    plugins = events.PluginTagToContent("hparams")
    assert "_hparams_/session_start_info" in plugins
    tb_dir = report.out_dir / "tensorboard_hparams"
    before = sorted(path.name for path in tb_dir.rglob("*"))
    write_tensorboard_hparams(tb_dir, read_inputs([gamma_sweep]).runs, ["aime24"])  # a second report
    assert len(sorted(path.name for path in tb_dir.rglob("*"))) == len(before)  # replaced, not added


@pytest.mark.slow
def test_report_command_prints_the_table_and_writes_the_files(gamma_sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-report"
    result = run_infoppo("report", str(gamma_sweep), "--format", "png", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "gamma-0.99-token-seed2" in result.stdout and "Final metrics" in result.stdout
    assert (out / "final_metrics.csv").exists() and (out / "report.md").exists()
    assert f"wrote {len(CURVE_FIGURES) + 2} figure(s) as png" in result.stdout  # + accuracy, final accuracy
    per_seed = result.stdout.index("Final metrics (last logged step")
    averaged = result.stdout.index("Final metrics, mean over seeds (± 95% CI, n seeds)")
    assert averaged < per_seed and "35.5 ± 6.353 (n=2)" in result.stdout[averaged:per_seed]
    assert (out / "final_metrics_seed_mean.csv").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing"], "error: no such directory: {tmp}/missing"),
        (["empty"], "error: no runs found in {tmp}/empty"),
        (["run", "--format", "gif"], "error: unknown --format gif"),
    ],
)
@pytest.mark.slow
def test_report_command_refusals_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text('{"step": 1, "reward_mean": 0.5}\n')
    result = run_infoppo(
        "report", *(str(tmp_path / a) if i == 0 else a for i, a in enumerate(args)), cwd=tmp_path
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(message.format(tmp=tmp_path))


def long_named_runs(root: Path) -> Path:
    for i in range(6):
        name = f"qwen3-4b-infoppo-lr{i}e-6-warmup-cosine-entropy-bonus-seed{i}"
        write_run(root / "runs" / name, 0.999, "info", i, {"aime24": 30.0 + i, "aime25": 20.0})
    return root / "runs"


def eval_directories(root: Path) -> Path:
    models = ["Qwen/Qwen3-4B-Base", "Qwen/Qwen3-8B-Base", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "org/m"]
    for i, model in enumerate(models):
        directory = root / "evals" / f"e{i}"
        directory.mkdir(parents=True)
        benches = {bench: {"mean@k": 20.0 + i, "mean@k_se": 1.0, "k": 16} for bench in ("aime24", "aime25")}
        (directory / "metrics.json").write_text(
            json.dumps({"benches": benches, "settings": {"model": model}})
        )
    return root / "evals"


@pytest.mark.parametrize(
    "make_inputs",
    [
        # whole reports of full sweeps, each figure rendered (seconds each): make test-fast keeps one
        pytest.param(lambda root: finished_sweep(root / "gamma", "gamma", 2), marks=pytest.mark.slow),
        pytest.param(
            lambda root: finished_sweep(root / "components", "components", 2), marks=pytest.mark.slow
        ),
        pytest.param(long_named_runs, marks=pytest.mark.slow),
        eval_directories,
    ],
    ids=["gamma-sweep", "components-sweep", "long-run-names", "eval-directories"],
)
def test_every_legend_lies_inside_its_figure(make_inputs, drawn_figures: list, tmp_path: Path) -> None:
    report = make_report([make_inputs(tmp_path)], tmp_path / "report", formats=("png",))
    assert sorted(stem for stem, _ in drawn_figures) == sorted(report.captions)
    for stem, figure in drawn_figures:  # each figure was rendered when saved
        box = figure.bbox
        assert len(figure.legends) == 1, stem
        extent = figure.legends[0].get_window_extent()
        inside = box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1 and box.y0 - 1 <= extent.y0
        assert inside and extent.y1 <= box.y1 + 1, f"{stem}: legend {extent.bounds} outside {box.bounds}"


def test_eval_directories_get_mean_at_k_with_its_standard_error_and_rows_named_by_model(
    tmp_path: Path,
) -> None:
    run = tmp_path / "qwen3-4b-infoppo-seed7"
    (run / "final").mkdir(parents=True)
    (run / "manifest.json").write_text(
        json.dumps({"config": {"method": "infoppo", "model": "Qwen/Qwen3-4B"}, "seed": 7})
    )
    trained = tmp_path / "evals" / "trained"
    trained.mkdir(parents=True)
    document = {
        "benches": {"aime24": {"mean@k": 31.25, "mean@k_se": 2.5, "k": 16}},
        "settings": {"model": str(run / "final")},
    }
    (trained / "metrics.json").write_text(json.dumps(document))
    base = eval_directories(tmp_path / "base")
    report = make_report([trained, base / "e0"], tmp_path / "report", formats=("png",))
    assert list(report.captions) == ["mean_at_k"] and "standard error" in report.captions["mean_at_k"]
    rows = read_csv(report.table_csv)
    assert list(rows) == ["qwen3-4b-infoppo-seed7", "Qwen/Qwen3-4B-Base"]
    mine = rows["qwen3-4b-infoppo-seed7"]
    assert (mine["model"], mine["method"], mine["seed"]) == ("Qwen/Qwen3-4B", "infoppo", "7")
    assert (mine["aime24"], mine["aime24_se"], mine["accuracy_from"]) == ("31.25", "2.5", "eval")
    assert "reward" not in report.columns and "steps" not in report.columns  # no column of dashes
    assert not any("not drawn" in note for note in report.notes)


def test_report_md_lists_the_seed_means_before_the_per_run_table(png_report: Report) -> None:
    text = png_report.report_md.read_text()
    assert text.index("## Final metrics, mean over seeds") < text.index("## Final metrics (last logged step")
    assert "| gamma | 0.999 | info | 2 | 2 | 35.5 ± 6.353 (n=2) |" in text
    assert "final_metrics_seed_mean.csv" in text and "## Runs that broke" not in text


def base_then_trained(run_dir: Path) -> Path:
    """A run as the trainer logs it: its base model evaluated at step 0 (eval keys only), then four
    training steps with an eval every second one, each eval with ``eval_mean_over_benches`` (a fraction)."""
    base = {"step": 0, "eval_aime24": 20.0, "eval_aime24_pass1": 0.2, "eval_aime25": 10.0}
    base |= {"eval_aime25_pass1": 0.1, "eval_mean_over_benches": 0.15}
    rows = [base]
    for step in STEPS:
        row = step_row(step, 0.999, "info", 1)
        if "eval_aime24" in row:
            row["eval_mean_over_benches"] = (row["eval_aime24"] + row["eval_aime25"]) / 200
        rows.append(row)
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"config": {"method": "infoppo"}, "seed": 1}))
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run_dir


def test_the_base_model_is_the_first_point_of_accuracy_curves(drawn_figures: list, tmp_path: Path) -> None:
    run = base_then_trained(tmp_path / "run")
    report = make_report([run], tmp_path / "report", formats=("png",))
    accuracy = dict(drawn_figures)["accuracy"]
    assert len(accuracy.axes) == 2  # aime24 and aime25: the mean over benchmarks is no panel of its own
    for axis in accuracy.axes:
        assert list(axis.lines[0].get_xdata()) == [0.0, 2.0, 4.0]
    assert list(axis.lines[0].get_ydata()) == [10.0, 11.0, 21.0]  # aime25: base, then 5 * step + seed
    assert "Step 0: the base model" in report.captions["accuracy"]
    assert "Step 0" not in report.captions["entropy"]
    assert not report.notes and not report.broken  # step 0 lacks the per-step metrics: that is no break
    rows = read_csv(report.table_csv)
    assert rows["run"]["steps"] == "4" and rows["run"]["aime24"] == "41.0"


def test_the_mean_over_benchmarks_gets_no_column_or_figure(tmp_path: Path) -> None:
    report = make_report([base_then_trained(tmp_path / "run")], tmp_path / "report", formats=("png",))
    assert not any("mean_over_benches" in column for column in report.columns)
    assert not any("mean_over_benches" in caption for caption in report.captions.values())
    assert "mean_over_benches" not in report.report_md.read_text()
    assert "mean_over_benches" not in (tmp_path / "report" / "hparams.csv").read_text()


@pytest.mark.slow
def test_report_benches_file_makes_a_user_benchmark_a_column_and_names_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_run(run, 0.999, "info", 1)
    with (run / "metrics.jsonl").open("a") as handle:  # the user's benchmark, as an older trainer logged it
        handle.write(json.dumps({"step": 4, "eval_mine": 62.5}) + "\n")
    (tmp_path / "mine.toml").write_text(MINE_TOML)
    without = make_report([run], tmp_path / "plain", formats=("png",))
    assert "mine" not in without.columns
    out = tmp_path / "cli-report"
    result = run_infoppo(
        "report", str(run), "--benches-file", "mine.toml", "--format", "png", "--out", str(out), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert read_csv(out / "final_metrics.csv")["run"]["mine"] == "62.5"
    text = (out / "report.md").read_text()
    assert "aime24 = AIME 2024 (I + II); aime25 = AIME 2025 (I + II); mine = My own set." in text
