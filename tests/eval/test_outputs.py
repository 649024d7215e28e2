"""What a finished eval writes besides samples.jsonl: lighteval-layout details and the run's model card."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import yaml
from tiny_model import build_tiny_model

from infoppo_cli.eval.details import details_path
from infoppo_cli.eval.run import run_evaluation
from infoppo_cli.eval.sample_store import SampleStore
from infoppo_cli.eval.settings import default_out_dir, resolve_settings
from infoppo_cli.rundir import RunDir

ROWS = [{"id": f"q{i}", "problem": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(3)]
MANIFEST = {
    "config": {
        "preset": "qwen3-4b",
        "method": "infoppo",
        "model": "Qwen/Qwen3-4B-Base",
        "openrlhf_flags": {"rollout.max_new_tokens": 6, "data.prompt_dataset": "/data/dapo.jsonl"},
    },
    "command": ["python", "-m", "openrlhf.cli.train_ppo_ray", "--algo.advantage.gamma", "1.0"],
    "seed": 1,
    "status": "finished",
    "versions": {"infoppo": "0.1.0"},
}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A run directory whose final/ holds the tiny model, evaluated with eval's defaults."""
    run = RunDir(tmp_path_factory.mktemp("runs") / "qwen3-4b-infoppo-seed1")
    build_tiny_model(run.final)
    run.manifest.write_text(json.dumps(MANIFEST))
    bench = run.path.parent / "bench.jsonl"
    bench.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    given = {"model": str(run.final), "benches": f"aime24={bench}", "backend": "hf"}
    out = default_out_dir(given["model"], None)
    settings = resolve_settings({**given, "samples": 2, "workers": 1}, out, resume=False)
    metrics = run_evaluation(settings, out)
    return run, out, metrics


def test_eval_of_run_final_lands_in_the_run(finished_run):
    run, out, metrics = finished_run
    assert out == run.eval.resolve()
    assert (run.eval / "metrics.json").is_file()  # where `infoppo report RUN` looks
    assert metrics["settings"]["max_tokens"] == 6  # the run's training length


def test_details_follow_lighteval_layout(finished_run):
    run, out, metrics = finished_run
    table = pq.read_table(details_path(out, "aime24"))
    assert sorted(table.column_names) == ["doc", "metric", "model_response"]
    rows = table.to_pylist()
    assert [row["doc"]["id"] for row in rows] == ["q0", "q1", "q2"]
    store = {r.key: r for r in SampleStore(out)}
    for row in rows:
        doc, response = row["doc"], row["model_response"]
        assert doc["choices"][doc["gold_index"]] == str(2 * int(doc["id"][1:]))
        assert doc["task_name"] == "aime24" and doc["num_samples"] == 2
        samples = [store[("aime24", doc["id"], i)] for i in range(2)]
        assert response["text"] == [s.response for s in samples]
        assert doc["specific"]["correct"] == [s.correct for s in samples]
        assert row["metric"]["mean@k"] == pytest.approx(sum(s.correct for s in samples) / 2)
    mean = 100 * sum(row["metric"]["mean@k"] for row in rows) / len(rows)
    assert mean == pytest.approx(metrics["benches"]["aime24"]["mean@k"])


def test_model_card_has_the_hub_header_and_the_results(finished_run):
    run, _, metrics = finished_run
    text = run.model_card.read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["base_model"] == "Qwen/Qwen3-4B-Base"
    assert meta["library_name"] == "transformers" and "infoppo" in meta["tags"]
    assert "datasets" not in meta  # a local data file is not a Hub dataset
    (result,) = meta["model-index"][0]["results"]
    assert result["dataset"]["name"] == "aime24"
    assert result["metrics"][0] == {
        "type": "mean@2",
        "value": round(metrics["benches"]["aime24"]["mean@k"], 2),
    }
    assert "| aime24 |" in body and "Mean@2" in body
    assert "python -m openrlhf.cli.train_ppo_ray --algo.advantage.gamma 1.0" in body
    assert "`infoppo`" in body and "`qwen3-4b`" in body


def test_a_model_card_that_cannot_be_written_is_a_warning_after_the_scores(finished_run, monkeypatch, caplog):
    from infoppo_cli.errors import UsageError

    run, out, _ = finished_run

    def malformed(owner, metrics):
        raise UsageError(f"{owner.manifest} is not an infoppo train manifest: versions is not an object")

    monkeypatch.setattr("infoppo_cli.eval.outputs.write_model_card", malformed)
    (out / "metrics.json").unlink()
    settings = resolve_settings({"model": str(run.final)}, out, resume=True)
    with caplog.at_level("WARNING"):
        metrics = run_evaluation(settings, out)
    assert (out / "metrics.json").is_file() and metrics["benches"]["aime24"]["samples"] == 6
    assert f"{run.model_card} was not updated: {run.manifest} is not an infoppo train manifest" in caplog.text
