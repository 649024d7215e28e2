"""Eval settings declared once (identity, defaults, --help); resume reproduces an uninterrupted run."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.run import run_evaluation
from infoppo_cli.eval.sample_store import SAMPLES_FILE, SampleStore
from infoppo_cli.eval.settings import IDENTITY_FIELDS, EvalSettings, check_compatible, default_out_dir

ROWS = [{"id": f"q{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(3)]


@pytest.fixture
def bench_file(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def test_identity_fields_come_from_the_declarations():
    assert set(IDENTITY_FIELDS) == {
        "model",
        "responses",
        "template",
        "temperature",
        "top_p",
        "max_tokens",
        "seed",
        "backend",
        "data_file",
    }
    # how samples are produced is not part of their identity: batch size, engines, grading workers
    for name in ("batch_size", "engines", "address", "workers", "tensor_parallel", "samples"):
        assert name not in IDENTITY_FIELDS


def test_a_changed_identity_field_is_refused_and_others_are_not():
    saved = dataclasses.asdict(EvalSettings(model="org/m", benches=("aime24",), backend="hf"))
    check_compatible(saved, EvalSettings(model="org/m", benches=("aime24",), backend="hf", batch_size=7))
    with pytest.raises(UsageError, match="seed 0 -> 1"):
        check_compatible(saved, EvalSettings(model="org/m", benches=("aime24",), backend="hf", seed=1))


def test_every_field_is_declared_for_the_command_line():
    for field in dataclasses.fields(EvalSettings):
        declaration = field.metadata.get("cli")
        assert declaration is not None and declaration["help"].endswith("."), field.name


def test_a_run_model_is_evaluated_into_the_run(tmp_path):
    run = tmp_path / "runs" / "qwen3-4b-infoppo-seed1"
    (run / "final").mkdir(parents=True)
    (run / "manifest.json").write_text("{}")
    assert default_out_dir(str(run / "final"), None) == (run / "eval").resolve()
    assert default_out_dir("Qwen/Qwen3-4B-Base", None).as_posix() == "evals/Qwen--Qwen3-4B-Base"
    assert default_out_dir(str(tmp_path), None).parts[0] == "evals"  # a directory outside any run


def _eval_command(model, bench_file, out, batch_size):
    return [
        sys.executable,
        "-m",
        "infoppo_cli",
        "eval",
        "--model",
        str(model),
        "--bench",
        "aime24",
        "--data-file",
        str(bench_file),
        "--backend",
        "hf",
        "--samples",
        "4",
        "--max-tokens",
        "8",
        "--workers",
        "1",
        "--batch-size",
        str(batch_size),
        "--out",
        str(out),
    ]


def _wait_for_samples(path, count, process, deadline_s=120):
    start = time.monotonic()
    while time.monotonic() - start < deadline_s:
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return
        if process.poll() is not None:
            pytest.fail(f"eval ended before writing {count} samples: {process.stderr.read()}")
        time.sleep(0.05)
    pytest.fail("no samples appeared")


def test_resume_with_another_batch_size_reproduces_the_uninterrupted_run(
    tiny_model_dir, bench_file, tmp_path
):
    """A real ``infoppo eval`` process is killed mid-run (SIGKILL) at batch size 1, then the
    same command finishes at batch size 5: the samples equal those of one uninterrupted run at batch
    size 3, none lost and none twice (seed per sample, not per batch). Ctrl-C in-process: test_run.py."""
    reference = tmp_path / "reference"
    settings = EvalSettings(
        model=str(tiny_model_dir),
        benches=("aime24",),
        data_file=str(bench_file),
        backend="hf",
        samples=4,
        max_tokens=8,
        batch_size=3,
        workers=1,
    )
    run_evaluation(settings, reference)

    out = tmp_path / "out"
    env = {**os.environ, "COLUMNS": "200"}
    process = subprocess.Popen(
        _eval_command(tiny_model_dir, bench_file, out, 1), env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for_samples(out / SAMPLES_FILE, 3, process)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    interrupted = len((out / SAMPLES_FILE).read_text().splitlines())
    assert 3 <= interrupted < 12

    finished = subprocess.run(
        _eval_command(tiny_model_dir, bench_file, out, 5), env=env, capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    lines = (out / SAMPLES_FILE).read_text().splitlines()
    assert len(lines) == 12
    resumed = {r.key: (r.response, r.num_tokens, r.finish_reason) for r in SampleStore(out)}
    expected = {r.key: (r.response, r.num_tokens, r.finish_reason) for r in SampleStore(reference)}
    assert resumed == expected
