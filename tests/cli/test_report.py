"""``infoppo report``'s options for raw data and contrasts, run in-process: --csv writes the data and
takes it back as an input, --contrasts prints and writes the paired differences, bad input is one line."""

from __future__ import annotations

from pathlib import Path

from cli_inprocess import run_cli
from contrast_runs import CONTRASTS_TOML, contrast_runs


def test_csv_out_then_in_and_contrasts_printed(monkeypatch, capsys, tmp_path: Path) -> None:
    runs = contrast_runs(tmp_path)
    (tmp_path / "design.toml").write_text(CONTRASTS_TOML)
    data = tmp_path / "data.csv"
    args = ["--format", "png", "--contrasts", tmp_path / "design.toml"]
    code, out, err = run_cli(
        monkeypatch, capsys, "report", runs, *args, "--csv", data, "--out", tmp_path / "a"
    )
    assert code == 0, err
    text = "".join(out.split())  # the test console is narrow: Rich wraps, within words too

    def shown(phrase: str) -> bool:
        return "".join(phrase.split()) in text

    assert shown("Pre-registered contrasts") and shown(f"wrote the raw per-step data to {data}")
    assert shown("contrasts.md, contrasts.csv") and "+14" in text
    code, out, err = run_cli(monkeypatch, capsys, "report", data, *args, "--out", tmp_path / "b")
    assert code == 0, err
    assert (tmp_path / "b" / "contrasts.md").read_text() == (tmp_path / "a" / "contrasts.md").read_text()


def test_bad_csv_output_and_input_are_one_line_each(monkeypatch, capsys, tmp_path: Path) -> None:
    runs = contrast_runs(tmp_path)
    code, _, err = run_cli(monkeypatch, capsys, "report", runs, "--csv", runs, "--out", tmp_path / "o")
    assert code == 2 and err.strip().splitlines() == [f"error: --csv {runs} is a directory; give a file path"]
    bad = tmp_path / "bad.csv"
    bad.write_text("run,step\nr,1\n")
    code, _, err = run_cli(monkeypatch, capsys, "report", bad, "--out", tmp_path / "o")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.strip().startswith(f"error: {bad} line 1: missing column(s) sweep, kind")
    code, _, err = run_cli(monkeypatch, capsys, "report", runs, "--contrasts", tmp_path / "none.toml")
    assert code == 2 and "none.toml: cannot read it" in err and len(err.strip().splitlines()) == 1
