"""Reading the responses: any JSONL with prompt and response, or an `infoppo eval` samples.jsonl."""

from __future__ import annotations

import json

import pytest
from inspect_fixtures import write_jsonl

from infoppo_cli.errors import UsageError
from infoppo_cli.inspect.responses import eval_template, read_items


def test_prompt_response_rows_with_optional_id_and_grade(tmp_path):
    path = write_jsonl(
        tmp_path / "r.jsonl",
        [{"prompt": "p1", "response": "r1", "id": 7, "correct": True}, {"prompt": "p2", "response": ""}],
    )
    items = read_items(path)
    assert [(i.id, i.prompt, i.response, i.correct) for i in items] == [
        ("7", "p1", "r1", True),
        ("2", "p2", "", None),
    ]
    assert len(read_items(path, max_responses=1)) == 1


def test_eval_samples_take_their_problems_from_the_eval_s_bench_file(tmp_path):
    data = write_jsonl(tmp_path / "aime.jsonl", [{"id": "p1", "problem": "Find x.", "answer": "3"}])
    (tmp_path / "eval_config.json").write_text(
        json.dumps({"settings": {"bench_files": {"aime24": str(data)}, "template": "boxed"}})
    )
    rows = [
        {"bench": "aime24", "id": "p1", "sample": s, "response": f"x = {s}", "correct": s == 0}
        for s in (0, 1)
    ]
    items = read_items(write_jsonl(tmp_path / "samples.jsonl", rows))
    assert eval_template(tmp_path / "samples.jsonl") == "boxed"  # inspect renders prompts as the eval did
    assert eval_template(tmp_path / "elsewhere" / "x.jsonl") is None
    assert [(i.id, i.prompt, i.correct) for i in items] == [
        ("aime24/p1#0", "Find x.", True),
        ("aime24/p1#1", "Find x.", False),
    ]


def test_a_lone_surrogate_is_repaired_so_it_can_be_tokenized_and_written(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"prompt": "1+1?\\udfff", "response": "so \\ud800 2", "id": "a\\ud801"}\n')
    (item,) = read_items(path)
    assert (item.prompt, item.response, item.id) == ("1+1?\ufffd", "so \ufffd 2", "a\ufffd")
    (item.prompt + item.response + item.id).encode("utf-8")


def test_samples_of_several_local_benchmarks_find_each_one_s_problems(tmp_path):
    aime = write_jsonl(tmp_path / "aime.jsonl", [{"id": "p1", "problem": "Find x.", "answer": "3"}])
    mine = write_jsonl(tmp_path / "mine.jsonl", [{"question": "Half of 8?", "answer": "4"}])
    settings = {"benches": ["aime24", "mine"], "bench_files": {"aime24": str(aime), "mine": str(mine)}}
    (tmp_path / "eval_config.json").write_text(json.dumps({"settings": settings}))
    rows = [
        {"bench": "aime24", "id": "p1", "sample": 0, "response": "3"},
        {"bench": "mine", "id": "1", "sample": 0, "response": "4"},
    ]
    items = read_items(write_jsonl(tmp_path / "samples.jsonl", rows))
    assert [(i.id, i.prompt) for i in items] == [("aime24/p1#0", "Find x."), ("mine/1#0", "Half of 8?")]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("", "empty"),
        ("\n\n", "empty"),
        ('{"prompt": "p"}\n', "line 1 has no text field 'response'"),
        ('{"prompt": "p", "response": 3}\n', "'response'"),
        ('{"prompt": "p", "response": "r"}\n{oops\n', "line 2: not valid JSON"),
        ('{"response": "r"}\n', "line 1 has no 'prompt'"),
        ('{"id": 1, "prompt": "p", "response": "r"}\n{"id": 1, "prompt": "q", "response": "s"}\n', "twice"),
    ],
)
def test_bad_files_are_one_line_usage_errors(tmp_path, content, message):
    path = tmp_path / "in.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=message):
        read_items(path)


def test_a_gold_answer_grades_rows_without_correct(tmp_path):
    rows = [
        {"prompt": "p", "response": "So \\boxed{4}.", "gold": "4"},
        {"prompt": "p", "response": "Answer: 5", "gold": 4},
        {"prompt": "p", "response": "no idea", "gold": "4"},
        {"prompt": "p", "response": "Answer: 5", "gold": "4", "correct": True},  # the file's verdict
        {"prompt": "p", "response": "Answer: 4"},
    ]
    items = read_items(write_jsonl(tmp_path / "r.jsonl", rows))
    assert [i.correct for i in items] == [True, False, False, True, None]
