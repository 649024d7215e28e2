"""In-training evaluation: options, OpenRLHF's eval flags, and the prompts in the training format."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.data.templates import render_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import EVAL_PROMPTS_FILE
from infoppo_cli.train.eval_set import eval_plan, training_template, write_eval_prompts
from infoppo_cli.train.plan import TrainRequest, plan_training


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_defaults_are_the_papers_figures(tmp_path):
    plan = eval_plan(None, None, None)
    assert list(plan.benches) == ["aime24", "aime25"] and (plan.every, plan.samples) == (5, 16)
    assert plan.flags(tmp_path) == {
        "eval.dataset": str(tmp_path / EVAL_PROMPTS_FILE),
        "eval.steps": 5,
        "eval.n_samples_per_prompt": 16,
        "eval.temperature": 1.0,
    }
    assert eval_plan("none", None, None).flags(tmp_path) == {}
    assert "Mean@4" in eval_plan("aime25", 5, 4).describe()


@pytest.mark.parametrize(
    ("selection", "every", "samples", "message"),
    [
        ("aime99", None, None, "unknown benchmark 'aime99'; choose from: amc23"),
        ("mine=", None, None, "--eval-bench mine=: give a file after '='"),
        ("aime24=/no/such.jsonl", None, None, "no such file"),
        (None, 0, None, "--eval-every must be >= 1"),
        (None, None, -2, "--eval-samples must be >= 1"),
    ],
)
def test_bad_options_are_one_clear_line(selection, every, samples, message):
    with pytest.raises(UsageError, match=message):
        eval_plan(selection, every, samples)


def test_prompts_use_the_training_template_and_the_bench_as_datasource(tmp_path):
    bench = _jsonl(tmp_path / "aime.jsonl", [{"problem": "Find $x$.", "answer": "\\boxed{12}"}])
    boxed = _jsonl(tmp_path / "train.jsonl", [{"prompt": render_prompt("p", "boxed"), "label": "1"}])
    template = training_template(str(boxed))
    assert template == "boxed" and training_template("org/dataset") == "dapo"
    path = write_eval_prompts(eval_plan(f"aime24={bench}", None, None), tmp_path, template)
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert row == {"prompt": render_prompt("Find $x$.", "boxed"), "label": "12", "datasource": "aime24"}
    assert write_eval_prompts(eval_plan("none", None, None), tmp_path / "off", "dapo") is None


def test_the_plan_carries_the_eval_flags_and_set_wins(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", [{"prompt": f"p{i}", "label": "1"} for i in range(64)])
    request = TrainRequest("qwen3-4b", "infoppo", data=str(data), output_dir=str(tmp_path / "run"))
    request.eval_every, request.eval_samples = 10, 8
    plan = plan_training(request)
    argv = plan.command()
    assert argv[argv.index("--eval.dataset") + 1] == str(tmp_path / "run" / EVAL_PROMPTS_FILE)
    assert (
        argv[argv.index("--eval.steps") + 1] == "10" and argv[argv.index("--eval.temperature") + 1] == "1.0"
    )
    request.overrides = ["eval.steps=5"]
    assert plan_training(request).flags["eval.steps"] == "5"
    request.eval_bench = "none"
    assert "--eval.dataset" not in plan_training(request).command()


def test_an_unreachable_benchmark_says_how_to_give_a_local_copy(tmp_path):
    with pytest.raises(UsageError, match="--eval-bench aime25=FILE, or --eval-bench none"):
        write_eval_prompts(eval_plan("aime25", None, None), tmp_path, "dapo")  # offline in tests


def test_eval_bench_takes_eval_s_syntax_new_names_and_a_benches_file(tmp_path, monkeypatch):
    bench = _jsonl(tmp_path / "mine.jsonl", [{"question": "2+2?", "answer": "4"}])
    toml = tmp_path / "benches.toml"
    toml.write_text(
        '[olympiad]\ntitle = "Olympiad"\nhf_id = "me/olympiad"\nsplit = "test"\n'
        'problem_column = "q"\nanswer_column = "a"\nsize = 1\nlicense = "CC0"\n'
    )
    plan = eval_plan(f"aime24,mine={bench},olympiad", None, None, benches_file=str(toml))
    assert plan.benches == {"aime24": None, "mine": str(bench), "olympiad": None}
    assert plan.benches_file == str(toml.resolve())
    with pytest.raises(UsageError, match="unknown benchmark 'olympiad'"):
        eval_plan("olympiad", None, None)
    toml_broken = tmp_path / "broken.toml"
    toml_broken.write_text("[olympiad]\ntitle = 3\n")
    with pytest.raises(UsageError, match=r"\[olympiad\] split is missing"):
        eval_plan("none", None, None, benches_file=str(toml_broken))  # checked even when eval is off

    from infoppo_cli.eval import benchmarks

    monkeypatch.setattr(benchmarks, "_rows_from_hub", lambda spec: [{"q": "Find 3.", "a": "3"}])
    path = write_eval_prompts(
        eval_plan(f"mine={bench},olympiad", None, None, benches_file=str(toml)), tmp_path, "raw"
    )
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(row["datasource"], row["label"]) for row in rows] == [("mine", "4"), ("olympiad", "3")]
