"""Several benchmarks in one output directory: given together or one by one, each under its own name and
resumed on its own; the output directory is never the command's own input."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from cli_inprocess import run_cli

from infoppo_cli.eval.details import details_path
from infoppo_cli.eval.sample_store import SAMPLES_FILE
from infoppo_cli.eval.settings import CONFIG_FILE
from infoppo_cli.rundir import EVAL_METRICS_FILE as METRICS_FILE

AIME = [{"id": "p1", "problem": "What is $2 + 3$?", "answer": "5"}]
MINE = [{"question": "Name the number after 6.", "answer": "7"}, {"question": "Half of 8?", "answer": "4"}]
OTHER = [{"problem": "Twice 5?", "answer": "10"}]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    write_jsonl(tmp_path / "aime.jsonl", AIME)
    write_jsonl(tmp_path / "mine.jsonl", MINE)
    write_jsonl(tmp_path / "other.jsonl", OTHER)
    return tmp_path


RESPONSES = [
    {"bench": "aime24", "id": "p1", "response": "Answer: 5"},
    {"bench": "mine", "id": "1", "response": "Answer: 7"},
    {"bench": "mine", "id": "2", "response": "Answer: 3"},
    {"bench": "other", "id": "1", "response": "Answer: 10"},
]


@pytest.fixture
def in_files(files, monkeypatch):
    monkeypatch.chdir(files)
    return files


def grade(monkeypatch, capsys, files, benches, *extra):
    """Grade the responses of the benchmarks in ``benches`` (rewritten into one responses file)."""
    names = {item.split("=")[0] for item in benches.split(",")}
    write_jsonl(files / "responses.jsonl", [row for row in RESPONSES if row["bench"] in names])
    args = ["eval", "--responses", files / "responses.jsonl", "--bench", benches, "--workers", "1"]
    return run_cli(monkeypatch, capsys, *args, "--out", files / "out", *extra)


def one_error(err: str) -> str:
    """The one ``error:`` line (warnings about the data may come before it)."""
    lines = [line for line in err.strip().splitlines() if line.startswith("error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_registry_name_and_a_new_name_with_local_files_in_one_call(monkeypatch, capsys, in_files):
    files = in_files
    code, stdout, err = grade(monkeypatch, capsys, files, "aime24=aime.jsonl,mine=mine.jsonl")
    assert code == 0, err
    metrics = json.loads((files / "out" / METRICS_FILE).read_text())
    assert list(metrics["benches"]) == ["aime24", "mine"]
    assert metrics["benches"]["mine"]["mean@k"] == pytest.approx(50.0)
    assert metrics["settings"]["data"]["mine"]["data_file"] == str(files / "mine.jsonl")
    assert metrics["settings"]["data"]["mine"]["hf_id"] is None
    assert metrics["settings"]["data"]["aime24"]["hf_id"] == "HuggingFaceH4/aime_2024"
    assert pq.read_table(details_path(files / "out", "mine")).num_rows == 2
    config = json.loads((files / "out" / CONFIG_FILE).read_text())
    assert config["sources"]["mine"] == {"file": str(files / "mine.jsonl")}
    assert config["settings"]["bench_files"]["aime24"] == str(files / "aime.jsonl")
    assert "mine" in stdout and "aime24" in stdout


def test_benchmarks_added_one_by_one_are_kept_and_resumed_each_on_its_own(monkeypatch, capsys, in_files):
    files = in_files
    assert grade(monkeypatch, capsys, files, "mine=mine.jsonl")[0] == 0
    code, _, err = grade(monkeypatch, capsys, files, "other=other.jsonl")
    assert code == 0, err  # a second local benchmark into the same directory is no "other settings"
    metrics = json.loads((files / "out" / METRICS_FILE).read_text())
    assert list(metrics["benches"]) == ["mine", "other"]  # the earlier one is carried, not dropped
    assert metrics["average"]["problems"] == 3
    assert metrics["settings"]["data"]["mine"]["data_file"] == str(files / "mine.jsonl")
    samples = [json.loads(line) for line in (files / "out" / SAMPLES_FILE).read_text().splitlines()]
    assert sorted({s["bench"] for s in samples}) == ["mine", "other"] and len(samples) == 3

    # the same benchmark from another file: refused, naming the benchmark, nothing written
    before = {p.name: p.read_bytes() for p in (files / "out").iterdir() if p.is_file()}
    code, _, err = grade(monkeypatch, capsys, files, "mine=other.jsonl")
    assert code == 2
    line = one_error(err)
    assert "holds mine samples made from" in line and "other.jsonl" in line and "--out" in line
    assert {p.name: p.read_bytes() for p in (files / "out").iterdir() if p.is_file()} == before

    # --resume continues every benchmark of the directory, from the saved files
    write_jsonl(files / "responses.jsonl", [row for row in RESPONSES if row["bench"] != "aime24"])
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--out", files / "out", "--resume", "--workers", "1")
    assert code == 0, err
    assert list(json.loads((files / "out" / METRICS_FILE).read_text())["benches"]) == ["mine", "other"]


def test_a_registry_benchmark_from_the_hub_then_from_a_file_is_refused(monkeypatch, capsys, in_files):
    files = in_files
    from infoppo_cli.eval import benchmarks

    monkeypatch.setattr(benchmarks, "_rows_from_hub", lambda spec: [dict(row) for row in AIME])
    assert grade(monkeypatch, capsys, files, "aime24")[0] == 0
    code, _, err = grade(monkeypatch, capsys, files, "aime24=aime.jsonl")
    assert code == 2
    assert "holds aime24 samples made from HuggingFaceH4/aime_2024 (train), not " in one_error(err)


def test_a_refused_run_leaves_no_configuration_behind(monkeypatch, capsys, in_files):
    files = in_files
    out = files / "fresh"
    args = ["eval", "--model", "./absent-model", "--bench", "mine=mine.jsonl", "--backend", "hf"]
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", out)
    assert code == 2 and not out.exists()
    model = files / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")  # a directory that looks like a model but cannot load
    code, _, err = run_cli(monkeypatch, capsys, *args[:2], model, *args[3:], "--out", out)
    assert code == 2, err
    assert "cannot load the tokenizer" in one_error(err)
    assert not (out / CONFIG_FILE).exists() and not (out / SAMPLES_FILE).exists()


@pytest.mark.parametrize(
    ("out", "fragment"),
    [
        ("model", "--out model is the command's own input"),
        ("model/evals", "--out model/evals is inside the command's own input"),
        ("model/a/b", "--out model/a/b is inside the command's own input"),
    ],
)
def test_the_model_directory_is_never_the_output(monkeypatch, capsys, in_files, out, fragment):
    model = in_files / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    args = ["eval", "--model", "model", "--bench", "mine=mine.jsonl", "--backend", "hf", "--out", out]
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and fragment in one_error(err)
    assert sorted(p.name for p in model.iterdir()) == ["config.json"]


def test_a_responses_label_is_not_an_input_directory(monkeypatch, capsys, in_files):
    # with --responses, --model only names the system: "." is a label, not a directory read
    code, _, err = grade(monkeypatch, capsys, in_files, "mine=mine.jsonl", "--model", ".")
    assert code == 0, err


def test_grading_the_output_s_own_samples_into_it_is_refused(monkeypatch, capsys, in_files):
    files = in_files
    assert grade(monkeypatch, capsys, files, "mine=mine.jsonl")[0] == 0
    args = ["eval", "--responses", "out/samples.jsonl", "--bench", "mine=mine.jsonl", "--out", "out"]
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2
    assert "--out out would write over the command's own input /" in one_error(err)
