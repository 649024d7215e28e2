"""Fault: after ``train --resume`` rewrote ``RUN/final``, ``infoppo eval`` into the same ``--out``
returned the old weights' samples and scores as the new model's, and the model card kept them.

The weights are retrained in place here by saving changed weights into the same directory, as the
final save of a resumed run does."""

from __future__ import annotations

import json

import pytest
import torch
from cli_process import run_infoppo
from tiny_model import build_tiny_model

from infoppo_cli.rundir.weights import CACHE_FILE, short, weights_fingerprint


def _retrain_in_place(model_dir) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir)
    with torch.no_grad():
        model.lm_head.weight.add_(0.01)
    model.save_pretrained(model_dir)


@pytest.mark.slow  # three child-process evals of a model
def test_an_eval_of_retrained_weights_into_the_same_out_is_refused_naming_both(tmp_path):
    model = build_tiny_model(tmp_path / "final")
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"problem": "What is 1 + 1?", "answer": "2"}\n')
    args = (
        "eval",
        "--model",
        str(model),
        "--backend",
        "hf",
        "--bench",
        f"x={bench}",
        "--samples",
        "1",
        "--max-tokens",
        "4",
        "--out",
        str(tmp_path / "eval"),
    )
    first = run_infoppo(*args, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    before = weights_fingerprint(str(model))
    saved = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert saved["weights_fingerprint"] == before and before.startswith("sha256:")

    _retrain_in_place(model)
    after = weights_fingerprint(str(model))
    assert after != before
    again = run_infoppo(*args, timeout=300)
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert f"samples of weights {short(before)}" in again.stderr and f"weights {short(after)}" in again.stderr
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text()) == saved  # nothing rewritten


def test_the_fingerprint_is_computed_once_per_set_of_weight_files(tmp_path, monkeypatch):
    from infoppo_cli.rundir import weights

    model = build_tiny_model(tmp_path / "m")
    first = weights_fingerprint(str(model))
    assert (model / CACHE_FILE).is_file()
    monkeypatch.setattr(weights, "_digest", lambda files: pytest.fail("hashed again"))
    assert weights_fingerprint(str(model)) == first  # same sizes and times: the cached value
    monkeypatch.undo()
    _retrain_in_place(model)
    assert weights_fingerprint(str(model)) != first
    assert weights_fingerprint("Qwen/Qwen3-4B-Base") is None  # a Hub id: nothing local to hash


def test_report_leaves_out_scores_of_weights_final_no_longer_holds(tmp_path):
    from infoppo_cli.report.runs import read_run
    from infoppo_cli.report.tables import table_rows

    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    (run / "eval").mkdir()
    (run / "metrics.jsonl").write_text('{"step": 1, "policy_loss": 0.1}\n')
    (run / "final" / "model.safetensors").write_bytes(b"the weights that were evaluated")
    scored = weights_fingerprint(str(run / "final"))
    metrics = {
        "benches": {"aime24": {"k": 16, "mean@k": 31.0, "mean@k_se": 1.0}},
        "weights_fingerprint": scored,
    }
    (run / "eval" / "metrics.json").write_text(json.dumps(metrics))

    notes: list[str] = []
    current = read_run(run, notes)
    assert current.eval_benches and current.weights == short(scored) and not notes
    columns, rows = table_rows([current], ["aime24"])
    assert rows[0][columns.index("weights")] == short(scored)

    (run / "final" / "model.safetensors").write_bytes(b"retrained by --resume: other weights, other size")
    stale = read_run(run, notes)
    assert not stale.eval_benches and stale.weights is None
    assert f"scored weights {short(scored)}, and final/ now holds" in notes[0]
