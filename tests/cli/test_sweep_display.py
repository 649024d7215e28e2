"""What a finished sweep prints after its per-run summary: its final metrics averaged over seeds."""

from __future__ import annotations

import io
from pathlib import Path

from report_runs import finished_sweep

from infoppo_cli.cli import sweep_display
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.state import open_sweep


def printed(monkeypatch, sweep_dir: Path) -> str:
    from rich.console import Console

    recorder = Console(width=200, record=True, file=io.StringIO())
    monkeypatch.setattr(sweep_display, "console", recorder)
    sweep_display.print_seed_means(sweep_dir)
    return recorder.export_text()


def test_a_finished_sweep_prints_each_grid_point_averaged_over_its_seeds(monkeypatch, tmp_path: Path) -> None:
    out = finished_sweep(tmp_path / "comp", "components", 2)
    text = printed(monkeypatch, out)
    assert "Final metrics, mean over seeds (± 95% CI, n seeds)" in text
    header, *rows = [line for line in text.splitlines() if line.startswith(("┃", "│"))]
    names = [cell.strip() for cell in header.strip("┃").split("┃")]
    table = [
        dict(zip(names, (cell.strip() for cell in row.strip("│").split("│")), strict=True)) for row in rows
    ]
    assert [row["arm"] for row in table] == ["ppo", "info-gae", "info-clip", "infoppo"]
    assert "value" not in names  # a components sweep has no swept value
    infoppo = table[-1]
    # the fixture's final scores are 30 + 0.999 + seed + 3.0 for infoppo: seeds 1 and 2
    assert infoppo["aime24"] == "35 ± 6.353 (n=2)" and (infoppo["done"], infoppo["runs"]) == ("2", "2")


def test_a_sweep_without_final_metrics_prints_no_averages(monkeypatch, tmp_path: Path) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "norm")
    open_sweep(plan, command=[], settings={})
    assert printed(monkeypatch, plan.out_dir).strip() == ""


def test_the_sweep_s_time_left_is_the_points_left_at_the_pace_so_far() -> None:
    assert sweep_display.sweep_time_left(600.0, 0, 4) is None  # nothing finished: no pace yet
    assert sweep_display.sweep_time_left(600.0, 2, 8) == 1800.0  # 300 s a point (side by side or not)
    assert sweep_display.points_line(2, 8, 1800.0) == "2/8 points done, ~30m00s left"
    assert sweep_display.points_line(8, 8, 0.0) == "8/8 points done"


def test_each_finished_point_says_how_many_are_done_and_the_time_left(monkeypatch, tmp_path: Path) -> None:
    from types import SimpleNamespace as Record

    from rich.console import Console
    from rich.progress import Progress

    recorder = Console(width=200, record=True, file=io.StringIO())  # not a terminal: lines, no bar
    monkeypatch.setattr(sweep_display, "progress_bar", lambda: Progress(console=recorder))
    now = [1000.0]
    reporter = sweep_display.ProgressReporter(clock=lambda: now[0])
    reporter.begin(3, "locally")
    now[0] += 120.0
    train = Record(name="train")
    run = Record(
        name="gamma-0.99-seed1", output_dir=str(tmp_path), status="done", duration_s=120.0, error=None
    )
    reporter.run_finished(run, train)
    now[0] += 120.0
    failed = Record(**{**vars(run), "name": "gamma-1.0-seed1", "status": "failed", "error": "boom"})
    reporter.run_finished(failed, train)
    reporter.end()
    lines = recorder.export_text().splitlines()
    assert lines[1] == "done gamma-0.99-seed1 in 2m00s  (1/3 points done, ~4m00s left)"
    assert lines[2].startswith("failed gamma-1.0-seed1: boom (log: ")
    assert lines[2].endswith("(2/3 points done, ~2m00s left)")
