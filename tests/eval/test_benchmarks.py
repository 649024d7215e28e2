"""The benchmark registry and loader, on small local files in each source's real column layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_process import run_infoppo

from infoppo_cli.cli.eval import bench_table
from infoppo_cli.data.templates import render_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import (
    BENCH_NAMES,
    DEFAULT_BENCHES,
    Problem,
    bench_spec,
    load_bench,
    load_registry,
    parse_selection,
)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# --- registry -----------------------------------------------------------------------------------------


def test_every_registered_benchmark_is_complete_and_sourced_from_its_hub_page():
    registry = load_registry()
    assert tuple(registry) == BENCH_NAMES  # the names are the shipped file's, in its order
    for spec in registry.values():
        if spec.task:  # a built-in task's held-out set: built offline, sourced from infoppo's code
            module = spec.source.split(":")[0]  # the task family's module (chain-shortcut's is chain.py)
            assert (
                not spec.hf_id
                and module.startswith("infoppo_cli/tasks/")
                and (Path(__file__).resolve().parents[2] / module).is_file()
            )
            continue
        assert spec.hf_id.count("/") == 1 and spec.split in ("train", "test") and spec.size > 0
        assert spec.license and spec.problem_column and spec.answer_column
        assert spec.source.startswith(f"https://huggingface.co/datasets/{spec.hf_id}")
        assert spec.config == (",".join(spec.configs) if spec.configs else None)


def test_math500_is_registered_with_its_columns_and_stays_out_of_the_default():
    spec = bench_spec("math500")
    assert (spec.hf_id, spec.split, spec.size) == ("HuggingFaceH4/MATH-500", "test", 500)
    assert (spec.problem_column, spec.answer_column, spec.id_column) == ("problem", "answer", "unique_id")
    assert "2305.20050" in spec.source  # Let's Verify Step by Step, which chose the 500
    assert "math500" not in DEFAULT_BENCHES and set(DEFAULT_BENCHES) < set(BENCH_NAMES)


def test_math500_layout_loads_latex_answers_and_path_ids(tmp_path):
    rows = [
        {
            "problem": "Convert the point $(0,3)$ to polar coordinates.",
            "solution": "...",
            "answer": "\\left( 3, \\frac{\\pi}{2} \\right)",
            "subject": "Precalculus",
            "level": 2,
            "unique_id": "test/precalculus/807.json",
        },
        {
            "problem": "Find $x$.",
            "solution": "...",
            "answer": "14",
            "subject": "Algebra",
            "level": 1,
            "unique_id": "test/algebra/1.json",
        },
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "math500.parquet")
    problems = load_bench("math500", tmp_path / "math500.parquet")
    assert [(p.id, p.answer) for p in problems] == [
        ("test/precalculus/807.json", "\\left( 3, \\frac{\\pi}{2} \\right)"),
        ("test/algebra/1.json", "14"),
    ]


def test_unknown_bench_lists_the_valid_names():
    with pytest.raises(
        UsageError, match=r"unknown benchmark 'aime23'; choose from: amc23, aime24, aime25, aime26, beyond"
    ):
        bench_spec("aime23")


def test_parse_selection_takes_names_in_any_case_once_each():
    maths = [name for name in BENCH_NAMES if name not in ("arithmetic", "chain", "chain-shortcut")]
    assert list(parse_selection("all")) == maths
    assert list(parse_selection("aime24, AIME25,aime24")) == ["aime24", "aime25"]
    with pytest.raises(UsageError, match="unknown benchmark 'gsm8k'"):
        parse_selection("aime24,gsm8k")
    with pytest.raises(UsageError, match="no benchmark given"):
        parse_selection(" , ")


def test_bench_table_shows_every_bench():
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(bench_table())
    text = console.export_text()
    for spec in load_registry().values():
        assert spec.name in text and spec.hf_id in text and spec.license in text


# --- loaders on local files in each real layout -------------------------------------------------------


def test_amc23_qwen_layout_with_float_answers_in_parquet(tmp_path, caplog):
    # Qwen2.5-Math / FlippyDora layout: id, problem, answer (float64), url, question.
    table = pa.table(
        {
            "id": [0, 7, 11],
            "problem": ["P0", "P7", "P11"],
            "answer": [27.0, -1.0, 3159.0],
            "url": ["u"] * 3,
            "question": ["Q0", "Q7", "Q11"],
        }
    )
    pq.write_table(table, tmp_path / "amc.parquet")
    problems = load_bench("amc23", tmp_path / "amc.parquet")
    assert problems == [
        Problem("amc23", "0", "Q0", "27"),  # the registry's problem column (question) wins
        Problem("amc23", "7", "Q7", "-1"),
        Problem("amc23", "11", "Q11", "3159"),
    ]
    assert "amc23: expected 40 problems but found 3" in caplog.text


def test_amc23_math_ai_layout_full_size_is_silent(tmp_path, caplog):
    rows = [{"id": i, "question": f"Q{i}", "answer": f"{i}.0", "url": "u"} for i in range(40)]
    problems = load_bench("amc23", write_jsonl(tmp_path / "amc.jsonl", rows))
    assert len(problems) == 40 and problems[5].answer == "5"
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_aime24_h4_layout_keeps_answer_not_solution_and_strips_leading_zeros(tmp_path):
    rows = [
        {
            "id": 60,
            "problem": "Find m+n.",
            "solution": "Long text ... 025",
            "answer": "025",
            "url": "u",
            "year": 2024,
        },
        {"id": 61, "problem": "Find k.", "solution": "... so 73.", "answer": "073", "url": "u", "year": 2024},
    ]
    problems = load_bench("aime24", write_jsonl(tmp_path / "aime24.jsonl", rows))
    assert [(p.id, p.answer) for p in problems] == [("60", "25"), ("61", "73")]


def test_aime24_maxwell_jia_layout_with_capitalised_columns_in_csv(tmp_path):
    with (tmp_path / "aime24.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ID", "Problem", "Solution", "Answer"])
        writer.writerow(["2024-I-1", "Every morning Aya walks.", "...", "204"])
        writer.writerow(["2024-I-2", "There exist real numbers.", "...", "025"])
    problems = load_bench("aime24", tmp_path / "aime24.csv")
    assert problems == [
        Problem("aime24", "2024-I-1", "Every morning Aya walks.", "204"),
        Problem("aime24", "2024-I-2", "There exist real numbers.", "25"),
    ]


def test_aime25_opencompass_layout_with_degrees(tmp_path):
    rows = [{"question": "Find the angle.", "answer": "336^\\circ"}, {"question": "Find n.", "answer": "70"}]
    problems = load_bench("aime25", write_jsonl(tmp_path / "aime2025-I.jsonl", rows))
    assert [(p.id, p.answer) for p in problems] == [("1", "336"), ("2", "70")]


def test_aime26_matharena_layout_with_int_answers_in_json(tmp_path):
    rows = [
        {"problem_idx": 1, "answer": 277, "problem": "P1"},
        {"problem_idx": 2, "answer": 62, "problem": "P2"},
    ]
    (tmp_path / "aime26.json").write_text(json.dumps(rows))
    problems = load_bench("aime26", tmp_path / "aime26.json")
    assert problems == [Problem("aime26", "1", "P1", "277"), Problem("aime26", "2", "P2", "62")]


def test_beyondaime_layout_and_json_with_a_data_key(tmp_path):
    rows = [{"problem": f"B{i}", "answer": str(33_124_147 - i)} for i in range(100)]
    (tmp_path / "beyond.json").write_text(json.dumps({"data": rows}))
    problems = load_bench("beyondaime", tmp_path / "beyond.json")
    assert len(problems) == 100 and problems[0] == Problem("beyondaime", "1", "B0", "33124147")


def test_dapo_aime_file_is_deduplicated(tmp_path, caplog):
    caplog.set_level("INFO")
    # BytedTsinghua-SIA/AIME-2024 repeats each problem 32x in DAPO's verl layout.
    rows = []
    for index, (problem, answer) in enumerate([("Find x.", "540"), ("Find y.", "73")]):
        for _ in range(32):
            rows.append(
                {
                    "data_source": "math_dapo",
                    "prompt": [{"content": render_prompt(problem), "role": "user"}],
                    "ability": "MATH",
                    "reward_model": {"ground_truth": answer, "style": "rule-lighteval/MATH_v2"},
                    "extra_info": {"index": index},
                }
            )
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "aime-2024.parquet")
    problems = load_bench("aime24", tmp_path / "aime-2024.parquet")
    assert problems == [Problem("aime24", "0", "Find x.", "540"), Problem("aime24", "1", "Find y.", "73")]
    assert "62 repeated problem rows" in caplog.text


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"problem": "P", "answer": ""}], "row 1 of aime24 has an empty or missing answer"),
        ([{"problem": "P", "answer": None}], "row 1 of aime24 has an empty or missing answer"),
        ([{"problem": "P", "answer": "1"}, {"problem": " ", "answer": "2"}], "row 2 of aime24 has an empty"),
        ([{"text": "P", "answer": "1"}], "no problem/question column found; columns are text, answer"),
        ([{"problem": "P", "score": "1"}], "no answer column found"),
        ([{"id": 1, "problem": "P", "answer": "1"}, {"id": 1, "problem": "Q", "answer": "2"}], "id '1'"),
    ],
)
def test_bad_files_raise_one_clear_error(tmp_path, rows, message):
    with pytest.raises(UsageError, match=message):
        load_bench("aime24", write_jsonl(tmp_path / "bad.jsonl", rows))


def test_unreadable_or_missing_files(tmp_path):
    (tmp_path / "broken.jsonl").write_text('{"problem": "P", "answer": "1"}\n{oops\n')
    with pytest.raises(UsageError, match=r"broken\.jsonl:2: not valid JSON"):
        load_bench("aime24", tmp_path / "broken.jsonl")
    with pytest.raises(UsageError, match="no such file"):
        load_bench("aime24", tmp_path / "absent.parquet")
    with pytest.raises(UsageError, match=r"unsupported file type \.txt"):
        load_bench("aime24", tmp_path / "aime.txt")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(UsageError, match="holds no rows"):
        load_bench("aime24", tmp_path / "empty.jsonl")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(UsageError, match=r"bad\.parquet: cannot read parquet"):
        load_bench("aime24", tmp_path / "bad.parquet")


def test_hub_loading_concatenates_configs(monkeypatch, caplog):
    # Only the network is replaced: each config comes back as a real `datasets.Dataset`.
    import datasets

    calls = []

    def load_dataset(path, name, split, revision):
        calls.append((path, name, split, revision))
        answers = ["336^\\circ"] + [f"{i:03d}" for i in range(1, 15)]
        return datasets.Dataset.from_list(
            [{"question": f"{name} P{i}", "answer": a} for i, a in enumerate(answers)]
        )

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    problems = load_bench("aime25")
    assert calls == [
        ("opencompass/AIME2025", "AIME2025-I", "test", None),
        ("opencompass/AIME2025", "AIME2025-II", "test", None),
    ]
    assert len(problems) == 30 and not [r for r in caplog.records if r.levelname == "WARNING"]
    assert problems[0] == Problem("aime25", "AIME2025-I-1", "AIME2025-I P0", "336")
    assert problems[15] == Problem("aime25", "AIME2025-II-1", "AIME2025-II P0", "336")
    assert problems[29].id == "AIME2025-II-15" and problems[29].answer == "14"


def test_hub_loading_offline_says_to_pass_a_local_file(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(UsageError) as caught:
        load_bench("aime26")
    message = str(caught.value)
    assert "MathArena/aime_2026" in message and "aime26=FILE" in message and "\n" not in message
    assert "HF_HUB_OFFLINE is set" in message


# --- the command line ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_benches_command_prints_the_registry():
    done = run_infoppo("benches")
    assert done.returncode == 0, done.stderr
    for spec in load_registry().values():
        assert spec.name in done.stdout and spec.hf_id in done.stdout and str(spec.size) in done.stdout


@pytest.mark.slow
def test_unknown_bench_on_the_command_line_is_one_line_and_exit_2():
    done = run_infoppo("eval", "--bench", "aime23", "--model", "some/model")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: unknown benchmark 'aime23'; choose from: amc23, aime24, aime25, aime26, beyondaime, "
        "math500, arithmetic, chain, chain-shortcut (or 'all'), or give a local file as NAME=FILE"
    ]


@pytest.mark.slow
def test_benches_command_explains_local_files_and_reads_a_benches_file(tmp_path):
    (tmp_path / "mine.toml").write_text(
        '[olympiad]\ntitle = "My olympiad set"\nhf_id = "me/olympiad"\nsplit = "test"\n'
        'problem_column = "q"\nanswer_column = "a"\nsize = 12\nlicense = "CC0"\n'
    )
    done = run_infoppo("benches", "--benches-file", str(tmp_path / "mine.toml"))
    assert done.returncode == 0, done.stderr
    assert "olympiad" in done.stdout and "me/olympiad" in done.stdout
    assert "--bench aime24=aime24.jsonl" in " ".join(done.stdout.split())
    assert "[mine]" in done.stdout and "--benches-file FILE.toml" in " ".join(done.stdout.split())
    broken = run_infoppo("benches", "--benches-file", str(tmp_path / "absent.toml"))
    assert broken.returncode == 2 and broken.stderr.strip().splitlines() == [
        f"error: --benches-file {(tmp_path / 'absent.toml').resolve()}: no such file"
    ]
