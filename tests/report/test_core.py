"""Reports from synthetic sweeps: every figure in every format, report.md, the tables, hparams export."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from cli_process import run_infoppo
from PIL import Image
from report_runs import STEPS, finished_sweep, step_row

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
        assert image.size == (round(PANEL_INCHES[0] * panels[stem] * DPI), round(PANEL_INCHES[1] * DPI))
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
        "95% CI" in report.captions["accuracy"]
        and "one point per seed" in report.captions["final_accuracy_gamma"]
    )
    assert "| gamma-0.999-info-seed2 | gamma | 0.999 | info | 2 | done | 4 |" in text


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
    assert float(info["aime24"]) == 30 + 0.999 + 2 + 3  # the final eval's mean@k wins over training evals
    assert float(info["aime25"]) == last["eval_aime25"]  # only measured during training
    assert info["accuracy_from"] == "eval+training"
    token = rows["gamma-0.99-token-seed2"]
    assert token["rho"] == "" and token["Gamma_info"] == ""  # token time logs no rho
    assert float(token["aime24"]) == 10.0 * 4 + 2 and token["accuracy_from"] == "training"
    assert report.table_md.read_text().startswith(
        "| run | sweep | value | arm | seed | status | steps | reward"
    )


def test_hparams_csv_and_tensorboard_export_hold_every_run_with_its_parameters(
    png_report: Report, gamma_sweep: Path
) -> None:
    report = png_report
    rows = read_csv(report.hparams_csv)
    assert len(rows) == 8
    row = rows["gamma-0.99-token-seed1"]
    assert (row["gamma"], row["lambd"], row["method"], row["seed"]) == ("0.99", "0.99", "ppo", "1")
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


def test_report_command_prints_the_table_and_writes_the_files(gamma_sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-report"
    result = run_infoppo("report", str(gamma_sweep), "--format", "png", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "gamma-0.99-token-seed2" in result.stdout and "Final metrics" in result.stdout
    assert (out / "final_metrics.csv").exists() and (out / "report.md").exists()
    assert f"wrote {len(CURVE_FIGURES) + 2} figure(s) as png" in result.stdout  # + accuracy, final accuracy


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing"], "error: no such directory: {tmp}/missing"),
        (["empty"], "error: no runs found in {tmp}/empty"),
        (["run", "--format", "gif"], "error: unknown --format gif"),
    ],
)
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
