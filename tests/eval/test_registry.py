"""The registry with a user's benches file, and the selection syntax shared by eval and train."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import Problem, describe_bench, load_bench
from infoppo_cli.eval.registry import (
    BENCH_NAMES,
    bench_names,
    bench_spec,
    load_registry,
    parse_selection,
    registry_path,
    selection_text,
    spec_from_table,
)

GOOD_TABLE = """
[olympiad]
title = "My olympiad set"
hf_id = "me/olympiad"
configs = ["part-a", "part-b"]
split = "test"
revision = "abc123"
problem_column = "q"
answer_column = "a"
id_column = "n"
size = 2
license = "CC0-1.0"
source = "https://example.org/olympiad"
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def rows_file(path: Path, rows: list[dict]) -> Path:
    return write(path, "".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def benches_file(tmp_path) -> Path:
    return write(tmp_path / "mine.toml", GOOD_TABLE)


@pytest.fixture
def local_file(tmp_path) -> Path:
    return rows_file(tmp_path / "probs.jsonl", [{"question": "1+1?", "answer": "2"}])


# --- the selection syntax -------------------------------------------------------------------------------


def test_names_files_and_all_in_one_selection(local_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chosen = parse_selection(f"aime24, mine={local_file.name},AIME25=probs.jsonl")
    assert chosen == {"aime24": None, "mine": str(local_file), "aime25": str(local_file)}
    maths = [name for name, spec in load_registry().items() if not spec.task]  # `all`: the maths benchmarks
    assert list(parse_selection("all")) == maths and list(parse_selection("arithmetic")) == ["arithmetic"]
    assert list(parse_selection("aime24,aime24")) == ["aime24"]
    assert parse_selection(f"aime24={local_file},aime24") == {"aime24": str(local_file)}
    everything = parse_selection(f"all,mine={local_file}")
    assert list(everything) == [*maths, "mine"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no benchmark given; choose from: amc23"),
        (" , ", "no benchmark given"),
        ("gsm8k", "unknown benchmark 'gsm8k'; choose from: amc23, aime24, aime25, aime26, beyondaime"),
        ("mine=absent.jsonl", "--bench mine=absent.jsonl: no such file"),
        ("mine=probs.txt", "unsupported file type .txt"),
        ("mine=probs", "unsupported file type (none)"),
        ("mine=", "give a file after '='"),
        ("=probs.jsonl", "give the benchmark's name before '='"),
        ("My Bench=probs.jsonl", "a benchmark name is lowercase letters"),
        ("../up=probs.jsonl", "a benchmark name is lowercase letters"),
        ("all=probs.jsonl", "'all' is a word of the selection syntax"),
        ("none=probs.jsonl", "'none' is a word of the selection syntax"),
        ("mine=probs.jsonl,mine=other.jsonl", "mine is given twice, with different files"),
        ("mine=adir.jsonl", "--bench mine=adir.jsonl is not a file"),
    ],
)
def test_bad_selections_are_one_clear_line(text, message, local_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows_file(tmp_path / "other.jsonl", [{"problem": "x", "answer": "1"}])
    (tmp_path / "adir.jsonl").mkdir()
    with pytest.raises(UsageError, match=_literal(message)) as caught:
        parse_selection(text)
    assert "\n" not in str(caught.value)


def _literal(text: str) -> str:
    import re

    return re.escape(text)


def test_the_option_name_is_the_callers(tmp_path):
    with pytest.raises(UsageError, match="--eval-bench x=absent.jsonl: no such file"):
        parse_selection("x=absent.jsonl", option="--eval-bench")


def test_none_selects_no_benchmark_and_stands_alone(local_file):
    assert parse_selection("none") == {} and parse_selection(" OFF ") == {}
    with pytest.raises(UsageError, match="'none' selects no benchmark, so it stands alone"):
        parse_selection("aime24,none")
    maths = [name for name, spec in load_registry().items() if not spec.task]  # no built-in task's set
    assert list(parse_selection("all")) == maths and "arithmetic" not in maths


def test_a_selection_written_back_reads_back_the_same(local_file):
    for text in ("aime24", f"aime24,mine={local_file}", "none", "all"):
        chosen = parse_selection(text)
        assert parse_selection(selection_text(chosen)) == chosen
    assert selection_text({}) == "none"


# --- a user's benches file ------------------------------------------------------------------------------


def test_a_benches_file_adds_its_benchmarks_after_the_shipped_ones(benches_file):
    registry = load_registry(benches_file)
    assert list(registry) == [*BENCH_NAMES, "olympiad"]
    spec = registry["olympiad"]
    assert (spec.hf_id, spec.configs, spec.revision, spec.id_column, spec.size) == (
        "me/olympiad",
        ("part-a", "part-b"),
        "abc123",
        "n",
        2,
    )
    assert bench_names(benches_file)[-1] == "olympiad" and "olympiad" not in bench_names()
    assert parse_selection("olympiad,aime24", benches_file) == {"olympiad": None, "aime24": None}
    assert list(parse_selection("all", benches_file))[-1] == "olympiad"
    with pytest.raises(UsageError, match="unknown benchmark 'olympiad'"):
        bench_spec("olympiad")


def test_a_changed_benches_file_is_read_again(benches_file):
    assert load_registry(benches_file)["olympiad"].size == 2
    write(benches_file, GOOD_TABLE.replace("size = 2", "size = 30"))
    assert load_registry(benches_file)["olympiad"].size == 30


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "defines no benchmark"),
        ("[olympiad\n", "not valid TOML"),
        ("olympiad = 3\n", ": olympiad must be a table, got 3"),
        (GOOD_TABLE.replace("hf_id", "hf-id"), "[olympiad] hf-id is not a known key (known: title, hf_id"),
        (GOOD_TABLE.replace('license = "CC0-1.0"\n', ""), "[olympiad] license is missing"),
        (GOOD_TABLE.replace("size = 2", 'size = "2"'), "[olympiad] size must be an integer, got '2'"),
        (GOOD_TABLE.replace("size = 2", "size = true"), "size must be an integer, got true"),
        (GOOD_TABLE.replace("size = 2", "size = 0"), "size must be an integer >= 1, got 0"),
        (GOOD_TABLE.replace('"me/olympiad"', '"olympiad"'), "hf_id must be a Hub dataset id ORG/NAME"),
        (
            GOOD_TABLE.replace('["part-a", "part-b"]', "[1]"),
            "configs must be a list of config names, got [1]",
        ),
        (GOOD_TABLE.replace('split = "test"', 'split = " "'), "[olympiad] split is empty"),
        (GOOD_TABLE.replace("[olympiad]", "[aime24]"), ": aime24 is a shipped benchmark"),
        (GOOD_TABLE.replace("[olympiad]", "[all]"), ": all is a shipped benchmark or a reserved word"),
        (GOOD_TABLE.replace("[olympiad]", '["My Set"]'), "a benchmark name is lowercase letters"),
        (GOOD_TABLE.replace("size = 2", "size = nan"), "[olympiad] size must be an integer, got nan"),
        (GOOD_TABLE.replace("size = 2", "size = -inf"), "[olympiad] size must be an integer, got -inf"),
        (
            GOOD_TABLE.replace('hf_id = "me/olympiad"', 'task = "arithmetc"'),
            "[olympiad] task is no built-in task (known: arithmetic, chain, chain-shortcut), got 'arithmetc'",
        ),
        ("a = " + "[" * 50_000 + "]" * 50_000, "not valid TOML (nested too deeply to read)"),
    ],
)
def test_a_bad_benches_file_is_refused_with_the_shipped_files_rules(tmp_path, text, message):
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(UsageError, match=_literal(message)) as caught:
        load_registry(path)
    assert str(path.resolve()) in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_or_binary_benches_file(tmp_path):
    with pytest.raises(UsageError, match="absent.toml: no such file"):
        load_registry(tmp_path / "absent.toml")
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_registry(tmp_path / "binary.toml")
    with pytest.raises(UsageError, match="is not a file"):
        load_registry(tmp_path)


def test_a_benches_file_is_read_past_a_byte_order_mark_like_every_jsonl_file(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD_TABLE.encode())
    assert load_registry(path)["olympiad"].hf_id == "me/olympiad"
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + GOOD_TABLE.encode())  # one mark, not any number
    with pytest.raises(UsageError, match="not valid TOML"):
        load_registry(path)


def test_a_table_naming_a_built_in_task_is_kept(tmp_path):
    text = GOOD_TABLE.replace('hf_id = "me/olympiad"', 'task = "arithmetic"')
    assert load_registry(write(tmp_path / "task.toml", text))["olympiad"].task == "arithmetic"


def test_the_shipped_tables_pass_the_same_checks():
    import tomllib

    tables = tomllib.loads(registry_path().read_text(encoding="utf-8"))
    for name, table in tables.items():
        assert spec_from_table(name, table, str(registry_path())) == load_registry()[name]


def test_a_benches_file_benchmark_loads_from_the_hub_with_its_columns(benches_file, monkeypatch):
    import datasets

    calls = []

    def load_dataset(path, name, split, revision):
        calls.append((path, name, split, revision))
        return datasets.Dataset.from_list([{"q": f"{name}: what?", "a": "7", "n": name}])

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr("infoppo_cli.data.hub.hub_unavailable", lambda: None)
    problems = load_bench("olympiad", benches_file=benches_file)
    assert calls == [("me/olympiad", "part-a", "test", "abc123"), ("me/olympiad", "part-b", "test", "abc123")]
    assert problems == [
        Problem("olympiad", "part-a", "part-a: what?", "7"),
        Problem("olympiad", "part-b", "part-b: what?", "7"),
    ]


def test_a_new_name_with_a_file_is_a_benchmark_of_its_own(local_file, caplog):
    problems = load_bench("mine", local_file)
    assert problems == [Problem("mine", "1", "1+1?", "2")]
    assert not [r for r in caplog.records if r.levelname == "WARNING"]  # no expected size to miss
    with pytest.raises(UsageError, match="unknown benchmark 'mine'"):
        load_bench("mine")


def test_describe_bench_names_registry_file_and_unknown_benchmarks(benches_file):
    assert describe_bench("math500")["source"].startswith("https://huggingface.co/datasets/HuggingFaceH4/")
    assert describe_bench("olympiad", benches_file) == {
        "name": "olympiad",
        "title": "My olympiad set",
        "source": "https://example.org/olympiad",
        "size": 2,
        "license": "CC0-1.0",
    }
    assert describe_bench("mine")["title"] == "mine"
