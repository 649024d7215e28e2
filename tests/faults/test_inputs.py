"""Faults found by a hostile but fair user: odd inputs that crashed, hung or were read wrongly.

Each test is one reported problem, run through the real entry point in a child process (as a user's
shell would), and failed before its fix."""

from __future__ import annotations

import json
import time

import pytest
from cli_process import run_infoppo

DAPO_ROW = {
    "data_source": "math_dapo",
    "prompt": [{"role": "user", "content": "What is 1 + 1?"}],
    "ability": "MATH",
    "reward_model": {"ground_truth": "2", "style": "rule"},
    "extra_info": {"index": "a1"},
}


@pytest.mark.slow  # waits out the grader's 10 s deadline, in a child process
def test_one_response_grading_stops_at_the_deadline():
    """Big-integer arithmetic inside math-verify ran until killed on the one-response path."""
    started = time.monotonic()
    done = run_infoppo(
        "grade", "--gold", "10^{10^{10^{10}}}", "Answer: \\boxed{10^{10^{10^{10}}}+1}", timeout=60
    )
    assert done.returncode == 1 and "timeout" in done.stdout
    assert time.monotonic() - started < 40  # the 10 s deadline, process start-up and a worker's


@pytest.mark.parametrize("as_json", [False, True])
def test_a_lone_surrogate_is_written_escaped_not_a_traceback(tmp_path, as_json):
    rows = tmp_path / "samples.jsonl"
    rows.write_text(
        '{"response": "Answer: \\ud800 12", "gold": "12"}\n{"response": "Answer: 5", "gold": "5"}\n'
    )
    done = run_infoppo("grade", "--file", str(rows), *(["--json"] if as_json else []))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    if as_json:
        cases = json.loads(done.stdout)["cases"]
        assert cases[0]["span"] == "\ud800 12"  # lossless: the escape reads back as the same text
    else:
        assert "\\ud800 12" in done.stdout


def test_deeply_nested_json_is_a_malformed_row(tmp_path):
    source = tmp_path / "rows.jsonl"
    source.write_text("[" * 100_000 + "\n" + json.dumps(DAPO_ROW) + "\n")
    done = run_infoppo(
        "data", "prep", "dapo-math-17k", "--source", str(source), "--out", str(tmp_path / "o.jsonl")
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 1


def test_a_byte_order_mark_is_read_alike_by_data_prep_and_eval(tmp_path):
    """data prep dropped the first row of a file starting with a BOM; eval refused the same file."""
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + (json.dumps(DAPO_ROW) + "\n").encode())
    out = tmp_path / "o.jsonl"
    done = run_infoppo("data", "prep", "dapo-math-17k", "--source", str(source), "--out", str(out))
    assert done.returncode == 0 and len(out.read_text().splitlines()) == 1, done.stdout + done.stderr
    from infoppo_cli.eval.benchmarks import load_bench

    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(b"\xef\xbb\xbf" + b'{"problem": "1+1?", "answer": "2"}\n')
    (problem,) = load_bench("mine", str(bench))
    assert problem.answer == "2"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_gold_answer_is_refused(tmp_path, value):
    from infoppo_cli.errors import UsageError
    from infoppo_cli.eval.benchmarks import load_bench

    bench = tmp_path / "bench.jsonl"
    bench.write_text(f'{{"problem": "1+1?", "answer": {value}}}\n')
    with pytest.raises(UsageError, match="row 1 of mine has an empty or missing answer"):
        load_bench("mine", str(bench))


def test_an_unreadable_first_training_row_is_an_error_not_the_dapo_template(tmp_path):
    from infoppo_cli.errors import UsageError
    from infoppo_cli.train.eval_set import training_template

    data = tmp_path / "train.jsonl"
    data.write_text('{"problem": "no prompt column"}\n')
    with pytest.raises(UsageError, match="first row has no text 'prompt'"):
        training_template(str(data))
    data.write_text(json.dumps({"prompt": "Solve: 1+1", "label": "2"}) + "\n")
    assert training_template(str(data)) == "raw"


@pytest.fixture(scope="module")
def truncated_model(tmp_path_factory):
    from tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    return model


@pytest.mark.slow  # two child processes that import torch and transformers
def test_truncated_weights_are_one_line_naming_the_file_in_eval_and_inspect(tmp_path, truncated_model):
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"problem": "1+1?", "answer": "2"}\n')
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"prompt": "What is 1+1?", "response": "Answer: 2"}\n')
    commands = [
        (
            "eval",
            "--model",
            str(truncated_model),
            "--backend",
            "hf",
            "--bench",
            f"x={bench}",
            "--samples",
            "1",
            "--out",
            str(tmp_path / "eval"),
        ),
        (
            "inspect",
            "--model",
            str(truncated_model),
            "--responses",
            str(responses),
            "--out",
            str(tmp_path / "i"),
        ),
    ]
    for command in commands:
        done = run_infoppo(*command, timeout=300)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert f"{truncated_model / 'model.safetensors'} is corrupt" in done.stderr


BENCH_TABLE = """[mine]
title = "My bench"
hf_id = "me/mine"
split = "test"
problem_column = "problem"
answer_column = "answer"
size = 10
license = "MIT"
"""


def test_a_benches_file_with_a_byte_order_mark_is_read_like_the_jsonl_files(tmp_path):
    """tomllib refused a registry file starting with a BOM, which data prep, eval --bench and grade --file
    all read past."""
    registry = tmp_path / "mine.toml"
    registry.write_bytes(b"\xef\xbb\xbf" + BENCH_TABLE.encode())
    done = run_infoppo("benches", "--benches-file", str(registry))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "me/mine" in done.stdout  # the table's row: its Hub id


def test_an_unknown_task_in_a_benches_file_is_one_line_listing_the_known_tasks(tmp_path):
    """A table naming a built-in task that does not exist was accepted, and failed only when evaluated."""
    registry = tmp_path / "mine.toml"
    registry.write_text(BENCH_TABLE.replace('hf_id = "me/mine"', 'task = "arithmetc"'))
    done = run_infoppo("benches", "--benches-file", str(registry))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    assert "[mine] task" in line and "'arithmetc'" in line and "arithmetic" in line and "chain" in line


@pytest.mark.parametrize(
    "nesting", ["a = " + "[" * 100_000 + "]" * 100_000, "a = " + "{x=" * 5_000 + "1" + "}" * 5_000]
)
def test_a_deeply_nested_benches_file_is_one_line_not_a_traceback(tmp_path, nesting):
    registry = tmp_path / "mine.toml"
    registry.write_text(nesting + "\n")
    done = run_infoppo("benches", "--benches-file", str(registry))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"--benches-file {registry}: not valid TOML" in done.stderr


DEEP_TOML = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"
DEEP_JSON = '{"a":' * 100_000 + "1" + "}" * 100_000


@pytest.fixture
def deep_files(tmp_path, monkeypatch):
    """A TOML file and a run directory, a sweep directory and an eval output whose files are nested
    100,000 deep."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "250")
    (tmp_path / "deep.toml").write_text(DEEP_TOML)
    for name in ("runs/deep/manifest.json", "sweeps/deep/sweep.json", "evals/deep/metrics.json"):
        (tmp_path / name).parent.mkdir(parents=True)
        (tmp_path / name).write_text(DEEP_JSON)
    (tmp_path / "runs" / "deep" / "metrics.jsonl").write_text(DEEP_JSON + "\n")
    (tmp_path / "model").mkdir()
    return tmp_path


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    from infoppo_cli.cli import main

    with pytest.raises(SystemExit) as exited:
        main(args)
    captured = capsys.readouterr()
    return exited.value.code, captured.out, captured.err


TRAIN_OFFLINE = ["--data", "../good.jsonl", "--model", "model", "--eval-bench", "none", "--dry-run"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["train", "--preset", "deep.toml", "--dry-run"],
            "preset file deep.toml: not valid TOML (nested too",
        ),
        (["presets", "--preset", "deep.toml"], "preset file deep.toml: not valid TOML (nested too deeply"),
        (["presets", "--methods-file", "deep.toml"], "methods file deep.toml: not valid TOML (nested too"),
        (
            ["train", "--preset", "qwen3-4b", "--methods-file", "deep.toml", "--dry-run"],
            "methods file deep.toml: not valid TOML (nested too deeply to read)",
        ),
        (
            ["train", "--replay", "runs/deep", "--dry-run"],
            "runs/deep/manifest.json is not a readable manifest (nested too deeply to read)",
        ),
        (
            ["train", "--preset", "qwen3-4b", "--resume", "--output-dir", "runs/deep", *TRAIN_OFFLINE],
            "manifest.json is not a readable manifest (nested too deeply to read)",
        ),
        (
            ["sweep", "gamma", "--out", "sweeps/deep", "--dry-run"],
            "sweeps/deep/sweep.json: nested too deeply",
        ),
        (["report", "sweeps/deep", "--out", "r"], "cannot read sweeps/deep/sweep.json: nested too deeply"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_deep_nesting_is_one_error_line_naming_the_file(deep_files, capsys, args, line):
    """tomllib's and json's RecursionError was a traceback in each of these."""
    (deep_files.parent / "good.jsonl").write_text(json.dumps({"prompt": "p", "label": "1"}) + "\n")
    code, out, err = _run(args, capsys)
    assert code == 2 and "Traceback" not in out + err, err[-2000:]
    errors = [text for text in err.splitlines() if text.startswith("error:")]
    assert len(errors) == 1 and line in errors[0], err


def test_a_report_names_each_deeply_nested_file_and_goes_on(deep_files, capsys):
    """A report reads what it can of a broken run (its health): each deep file is one warning."""
    (deep_files / "runs" / "deep" / "eval").mkdir()
    (deep_files / "evals" / "deep" / "metrics.json").rename(
        deep_files / "runs" / "deep" / "eval" / "metrics.json"
    )
    code, out, err = _run(["report", "runs/deep", "--out", "r"], capsys)
    assert code == 0 and "Traceback" not in out + err, err[-2000:]
    said = " ".join((out + err).split())
    assert "runs/deep/manifest.json is not a readable manifest (nested too deeply to read)" in said
    assert "runs/deep/eval/metrics.json (nested too deeply to read)" in said
    assert "skipped 1 malformed line(s) of runs/deep/metrics.jsonl" in said
