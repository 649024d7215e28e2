"""Fault: a disk that fills during a run. It gave tracebacks, left the manifest "running" and a partial
``global_step2`` checkpoint, and the plan (about 48 MB at peak) did not warn with 12 MB free.

A real CPU run writes to a 12 MB tmpfs (mounting one needs root; the test is skipped without): the plan
warns, the run stops at its checkpoint with one ``error:`` line naming the path and the space, the
manifest says "failed", and no partial checkpoint is left for ``latest`` or a resume to find: once
space is freed, ``--resume`` finishes the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_process import run_infoppo
from planned_run import assert_the_planned_program_ran

from infoppo_cli.rundir import read_metrics

pytestmark = pytest.mark.slow

SIZE = "12m"


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_stops_the_run_in_one_line_with_its_manifest_failed_and_no_partial_checkpoint(
    small_disk, task_cache
):
    run = small_disk / "run"
    args = ("train", "--preset", "tiny-cpu", "--method", "info-gae", "--steps", "2", "--eval-every", "2")
    args += ("--eval-samples", "2")
    done = run_infoppo(*args, "--no-eval-before", "--output-dir", str(run), timeout=900)
    shown = done.stdout + done.stderr
    assert done.returncode == 1, shown[-4000:]
    assert "warning: disk:" in shown  # the plan saw it coming
    errors = [line for line in shown.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, shown[-4000:]
    assert f"no space left on the device of {small_disk}" in errors[0]
    assert "the run at its peak needs about" in errors[0] and "free there" in errors[0]
    assert "Traceback" not in shown
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    for model in ("_actor", "_critic"):
        folder = run / "ckpt" / model
        if not folder.is_dir():
            continue
        latest = folder / "latest"
        tag = latest.read_text().strip() if latest.exists() else None
        assert tag is None or (folder / tag).is_dir(), f"{latest} names {tag!r}, which is not there"
        kept = {"latest", "zero_to_fp32.py"}  # DeepSpeed's pointer and its conversion script, no checkpoints
        steps = sorted(entry.name for entry in folder.iterdir() if entry.name not in kept)
        assert steps == ([tag] if tag else []), f"a partial checkpoint is left in {folder}: {steps}"
    assert not list(Path(run / "ckpt").glob("*_hf"))

    subprocess.run(["mount", "-o", "remount,size=200m", str(small_disk)], check=True)  # space freed
    resumed = run_infoppo(*args, "--no-eval-before", "--output-dir", str(run), "--resume", timeout=900)
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-4000:]
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"
    latest = (run / "ckpt" / "_actor" / "latest").read_text().strip()
    assert (run / "final").is_dir() and latest.endswith("global_step2")  # step 2's (or its best copy)
    assert_the_planned_program_ran("info-gae", read_metrics(run / "metrics.jsonl"))
