"""`infoppo inspect` end to end on the tiny model: outputs, resume, and bad input."""

from __future__ import annotations

import csv
import json
import os

import pyarrow.parquet as pq
import pytest
from inspect_fixtures import response_rows, write_jsonl

from infoppo_cli.cli import main
from infoppo_cli.inspect import entropy as fwd
from infoppo_cli.inspect.run import OUTPUTS, InspectSettings, run_inspect
from infoppo_cli.inspect.settings import method_clock


def _run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", *args])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_outputs_on_a_few_hundred_tokens_with_compare(
    capsys, tmp_path, sharp_model, plain_model, responses_file
):
    out = tmp_path / "out"
    args = ["--model", str(sharp_model), "--responses", str(responses_file), "--compare", str(plain_model)]
    code, stdout, _ = _run(capsys, *args, "--min-count", "5", "--top", "8", "--out", str(out))
    assert code == 0
    assert all((out / name).is_file() for name in OUTPUTS)
    table = pq.read_table(out / "tokens.parquet")
    assert table.num_rows > 200
    assert table.column_names[:8] == [
        "id",
        "position",
        "token",
        "entropy",
        "rho",
        "gamma_info",
        "clip_low",
        "clip_high",
    ]
    assert set(table["id"].to_pylist()) == {f"q{i}" for i in range(10)}
    assert max(table["rho"].to_pylist()) == pytest.approx(1.0)  # --norm batch: over the whole file
    drift = [
        b - a for a, b in zip(table["entropy"].to_pylist(), table["entropy_compare"].to_pylist(), strict=True)
    ]
    assert table["entropy_drift"].to_pylist() == pytest.approx(drift, abs=1e-6)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tokens"] == table.num_rows and summary["compare"]["tokens"] == table.num_rows
    assert summary["settings"] == {
        "norm": "batch",
        "gamma": 0.999,
        "eps_low_info": 10.0,
        "eps_high_info": 20.0,
        "template": "dapo",
        "min_count": 5,
        "top": 8,
    }
    assert summary["compare"]["clock_drift"]["entropy_diff"]["mean"] == pytest.approx(
        sum(drift) / len(drift), rel=1e-4
    )
    with open(out / "top_tokens.csv", newline="") as handle:
        ranking = list(csv.DictReader(handle))
    assert {r["list"] for r in ranking} == {"high", "low"} and all(int(r["count"]) >= 5 for r in ranking)
    assert "Information clock" in stdout and "clock drift" in stdout


@pytest.mark.slow
def test_resume_computes_only_what_is_missing(tmp_path, sharp_model, responses_file, monkeypatch):
    out, calls = tmp_path / "out", []
    real = fwd.response_entropies

    def interrupted(policy, items):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(len(items))
        return real(policy, items)

    monkeypatch.setattr(fwd, "response_entropies", interrupted)
    settings = InspectSettings(str(sharp_model), str(responses_file), min_count=2, batch_tokens=150)
    with pytest.raises(KeyboardInterrupt):
        run_inspect(settings, out, lambda *_: None)
    first_done = sum(calls)
    assert 0 < first_done < 10

    calls.clear()
    monkeypatch.setattr(
        fwd, "response_entropies", lambda p, items: calls.append(len(items)) or real(p, items)
    )
    resumed = run_inspect(settings, out, lambda *_: None)
    assert sum(calls) == 10 - first_done
    calls.clear()
    fresh = run_inspect(
        InspectSettings(str(sharp_model), str(responses_file), min_count=2),
        tmp_path / "fresh",
        lambda *_: None,
    )
    assert resumed["entropy"] == pytest.approx(
        fresh["entropy"], abs=1e-5
    )  # batching changes float32 rounding
    calls.clear()
    run_inspect(
        InspectSettings(
            str(sharp_model), str(responses_file), min_count=2, clock=method_clock(norm="sentence")
        ),
        out,
        lambda *_: None,
    )
    assert calls == []  # other clock settings reuse the stored entropies


def _workspace(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    write_jsonl(tmp_path / "noresp.jsonl", [{"prompt": "p"}])
    (tmp_path / "file").write_text("precious")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "badmodel").mkdir()
    (tmp_path / "badmodel" / "config.json").write_text("{}")
    return write_jsonl(tmp_path / "good.jsonl", response_rows(2))


@pytest.mark.parametrize(
    "model, responses, extra, message",
    [
        ("M", "missing.jsonl", [], "no such file"),
        ("M", "empty.jsonl", [], "empty"),
        ("M", "noresp.jsonl", [], "has no text field 'response'"),
        ("badmodel", "good.jsonl", [], "cannot load the model"),
        ("M", "good.jsonl", ["--out", "file"], "is a file"),
        ("M", "good.jsonl", ["--out", "fifo"], "FIFO"),
        ("M", "good.jsonl", ["--norm", "file"], "--norm"),
        ("M", "good.jsonl", ["--template", "nope"], "unknown template"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    capsys, tmp_path, sharp_model, model, responses, extra, message
):
    _workspace(tmp_path)
    model_arg = str(sharp_model) if model == "M" else str(tmp_path / model)
    extra = [str(tmp_path / arg) if arg in ("file", "fifo") else arg for arg in extra]
    code, _, err = _run(capsys, "--model", model_arg, "--responses", str(tmp_path / responses), *extra)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], err
    assert (tmp_path / "file").read_text() == "precious"


@pytest.mark.parametrize("inside", ["", "inspect", "a/b"])
def test_the_output_is_never_inside_the_model_directory(capsys, tmp_path, sharp_model, inside):
    responses = _workspace(tmp_path)
    before = sorted(p.name for p in sharp_model.iterdir())
    out = sharp_model / inside if inside else sharp_model
    code, _, err = _run(capsys, "--model", str(sharp_model), "--responses", str(responses), "--out", str(out))
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "the command's own input" in lines[0], err
    assert sorted(p.name for p in sharp_model.iterdir()) == before


def test_compare_with_another_tokenizer_is_refused_before_any_forward(
    capsys, tmp_path, sharp_model, responses_file, monkeypatch
):
    import shutil

    from transformers import AutoTokenizer

    other = shutil.copytree(sharp_model, tmp_path / "other")
    tokenizer = AutoTokenizer.from_pretrained(other)
    tokenizer.add_tokens(["<extra>"])
    tokenizer.save_pretrained(other)
    monkeypatch.setattr(fwd, "response_entropies", lambda *_: pytest.fail("no forward may run"))
    args = ["--model", str(sharp_model), "--responses", str(responses_file), "--compare", str(other)]
    code, _, err = _run(capsys, *args, "--out", str(tmp_path / "out"))
    assert code == 2 and "another tokenizer" in err and err.count("error:") == 1


@pytest.mark.slow  # two whole inspect runs (test-fast keeps test_outputs_on_a_few_hundred_tokens_...)
def test_what_inspect_could_not_do_is_said(capsys, tmp_path, sharp_model):
    """A small file lowers Figure 2's threshold (and says so), a response past the model's
    max_position_embeddings is warned about, and split characters keep their own rows."""
    import shutil

    model = shutil.copytree(sharp_model, tmp_path / "short-model")
    config = json.loads((model / "config.json").read_text())
    config["max_position_embeddings"] = 40
    (model / "config.json").write_text(json.dumps(config))
    rows = response_rows(4)
    rows[0]["response"] = "求 和 是 4。 " * 3 + rows[0]["response"]
    responses = write_jsonl(tmp_path / "small.jsonl", rows)
    out = tmp_path / "out"
    code, _, err = _run(capsys, "--model", str(model), "--responses", str(responses), "--out", str(out))
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["warnings"]) == 2
    too_long, small = summary["warnings"]
    assert "longer than" in too_long and "max_position_embeddings (40)" in too_long
    threshold = summary["settings"]["min_count"]
    assert 1 <= threshold < 100 and f"at least {threshold} time" in small and "not InfoPPO's 100" in small
    flat = " ".join(err.split())
    assert flat.count("warning:") == 2 and "max_position_embeddings" in flat and "--min-count" in flat
    assert "max_position_embeddings (40)" in (out / "index.html").read_text()
    with open(out / "top_tokens.csv", newline="") as handle:
        ranking = list(csv.DictReader(handle))
    assert ranking and all(int(r["count"]) >= threshold for r in ranking)
    tokens = pq.read_table(out / "tokens.parquet")["token"].to_pylist()
    assert "\ufffd" not in "".join(tokens) and "\\xe6" in tokens  # 求 = e6 b1 82

    code, _, err = _run(
        capsys,
        "--model",
        str(sharp_model),
        "--responses",
        str(responses),
        "--out",
        str(out),
        "--min-count",
        "999",
    )
    assert code == 0 and "no token is seen 999 times" in " ".join(err.split())
