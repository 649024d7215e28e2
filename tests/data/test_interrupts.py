"""`infoppo data prep` interrupted for real (Ctrl-C, then SIGKILL) mid-write: the previous output survives,
no temporary file breaks the next run, and the rerun writes exactly what an uninterrupted run writes."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from cli_process import run_infoppo, start_infoppo, wait_for

from infoppo_cli.data.dapo import prepare_dapo

pytestmark = pytest.mark.slow  # real processes, interrupted

ROWS = 50_000  # enough for a few seconds of work, so the signal lands mid-write


@pytest.fixture(scope="module")
def big_source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("source") / "big.jsonl"
    lines = (json.dumps({"prompt": f"What is {i} + {7 * i}?", "label": str(8 * i)}) for i in range(ROWS))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def uninterrupted(big_source, tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("reference") / "out.jsonl"
    prepare_dapo(str(big_source), out=out)
    return out.read_bytes()


def temporaries(directory: Path) -> list[Path]:
    return sorted(directory.glob(".out.jsonl.*.tmp"))


def interrupt_mid_write(source: Path, directory: Path, sig: signal.Signals) -> tuple[int, str]:
    process = start_infoppo(
        "data", "prep", "dapo-math-17k", "--source", str(source), "--out", "out.jsonl", cwd=directory
    )
    wait_for(
        lambda: any(p.stat().st_size > 0 for p in temporaries(directory)) or process.poll() is not None,
        what="data prep to start writing",
    )
    assert process.poll() is None, "data prep finished before it could be interrupted"
    process.send_signal(sig)
    _, err = process.communicate(timeout=60)
    return process.returncode, err


def test_ctrl_c_keeps_the_previous_output_and_leaves_no_temporary(big_source, uninterrupted, tmp_path):
    (tmp_path / "out.jsonl").write_text('{"previous": "run"}\n')
    code, err = interrupt_mid_write(big_source, tmp_path, signal.SIGINT)
    assert code == 130 and err.strip().splitlines()[-1] == "interrupted"
    assert (tmp_path / "out.jsonl").read_text() == '{"previous": "run"}\n'
    assert temporaries(tmp_path) == []
    done = run_infoppo(
        "data", "prep", "dapo-math-17k", "--source", str(big_source), "--out", "out.jsonl", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == uninterrupted


def test_sigkill_leftovers_are_cleaned_by_the_rerun(big_source, uninterrupted, tmp_path):
    code, _ = interrupt_mid_write(big_source, tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert not (tmp_path / "out.jsonl").exists()  # never a half-written output under the real name
    assert len(temporaries(tmp_path)) == 1  # what a killed writer leaves
    done = run_infoppo(
        "data", "prep", "dapo-math-17k", "--source", str(big_source), "--out", "out.jsonl", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == uninterrupted
    assert temporaries(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
