"""Eval settings declared once (identity, defaults, --help); resume reproduces an uninterrupted run."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.registry import DEFAULT_BENCHES
from infoppo_cli.eval.run import run_evaluation
from infoppo_cli.eval.sample_store import SAMPLES_FILE, SampleStore
from infoppo_cli.eval.settings import (
    IDENTITY_FIELDS,
    EvalSettings,
    check_compatible,
    default_out_dir,
    resolve_settings,
)

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
    }
    # how samples are produced is not part of their identity: batch size, engines, grading workers
    for name in ("batch_size", "engines", "address", "workers", "tensor_parallel", "samples"):
        assert name not in IDENTITY_FIELDS
    # a benchmark's source is checked per benchmark (eval.outdir), so benchmarks can be added one by one
    for name in ("benches", "benches_file", "bench_files"):
        assert name not in IDENTITY_FIELDS


def test_a_changed_identity_field_is_refused_and_others_are_not():
    saved = dataclasses.asdict(EvalSettings(model="org/m", benches=("aime24",), backend="hf"))
    check_compatible(saved, EvalSettings(model="org/m", benches=("aime24",), backend="hf", batch_size=7))
    with pytest.raises(UsageError, match="seed 0 -> 1"):
        check_compatible(saved, EvalSettings(model="org/m", benches=("aime24",), backend="hf", seed=1))


def test_every_field_is_declared_for_the_command_line():
    for field in dataclasses.fields(EvalSettings):
        if field.name == "bench_files":  # the files of --bench NAME=FILE, parsed from --bench
            assert field.metadata.get("cli") is None
            continue
        declaration = field.metadata.get("cli")
        assert declaration is not None and declaration["help"].endswith("."), field.name


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"temperature": math.inf}, "--temperature must be >= 0 and finite, got inf"),
        ({"temperature": math.nan}, "--temperature must be >= 0 and finite, got nan"),
        ({"temperature": -0.5}, "--temperature must be >= 0 and finite"),
        ({"top_p": math.nan}, "--top-p must be in (0, 1]"),
        ({"top_p": 0.0}, "--top-p must be in (0, 1]"),
        ({"samples": 1_000_000_000}, "--samples must be at most 100,000, got 1,000,000,000"),
        ({"samples": 0}, "--samples must be >= 1, got 0"),
        ({"max_tokens": 10**9}, "--max-tokens must be at most 1,048,576"),
        ({"workers": 10**6}, "--workers must be at most 1,024"),
        ({"engines": 5000}, "--engines must be at most 1,024"),
        ({"batch_size": 10**7}, "--batch-size must be at most 65,536"),
        ({"tensor_parallel": 128}, "--tensor-parallel must be at most 64"),
        ({"grade_timeout": math.inf}, "--grade-timeout must be > 0 and at most 86400 seconds, got inf"),
        ({"grade_timeout": 0.0}, "--grade-timeout must be > 0"),
    ],
)
def test_what_cannot_be_meant_is_refused(changes, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        EvalSettings(model="org/m", benches=("aime24",), **changes)


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_accepted_sampling_settings_are_finite_and_in_range(temperature, top_p):
    try:
        settings = EvalSettings(model="org/m", benches=("aime24",), temperature=temperature, top_p=top_p)
    except UsageError:
        return
    assert math.isfinite(settings.temperature) and settings.temperature >= 0
    assert 0 < settings.top_p <= 1


def test_bench_selection_with_local_files_resolves_to_names_and_absolute_files(bench_file, tmp_path):
    options = {"model": "org/m", "benches": f"aime24,mine={bench_file}"}
    settings = resolve_settings(options, tmp_path / "out", resume=False)
    assert settings.benches == ("aime24", "mine")
    assert settings.bench_files == {"mine": str(bench_file.resolve())}
    default = resolve_settings({"model": "org/m"}, tmp_path / "out", resume=False)
    assert default.benches == DEFAULT_BENCHES and default.bench_files == {}


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
        f"aime24={bench_file}",
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


@pytest.mark.slow
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
        bench_files={"aime24": str(bench_file)},
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
