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
