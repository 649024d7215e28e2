"""`infoppo data prep dapo-math-17k` on small files in DAPO-Math-17K's real schema."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_process import run_infoppo
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.cli.data import summary_table
from infoppo_cli.data.dapo import (
    conflicts_path,
    detect_lang,
    prepare_dapo,
    problem_id,
    problem_key,
)
from infoppo_cli.data.sources import open_source
from infoppo_cli.data.templates import render_prompt
from infoppo_cli.errors import UsageError

A = "Find the value of $x$ if $2x = 10$."
B = "How many primes are below 40?"
Z = "已知 $x^2 = 49$ 且 $x > 0$，求 $x$。"
C = "Compute $6 \\cdot 7$."
D = "What is 2+2?"

SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("ground_truth", pa.string()), ("style", pa.string())])),
        ("extra_info", pa.struct([("index", pa.string())])),
    ]
)


def dapo_row(prompt_text, answer, index, *, templated=True, messages=None):
    """One row in verl's DAPO schema (``prompt_text=None``: null prompt; ``answer=...``: no reward_model)."""
    if messages is None and prompt_text is not None:
        content = render_prompt(prompt_text) if templated else prompt_text
        messages = [{"content": content, "role": "user"}]
    reward_model = None if answer is ... else {"ground_truth": answer, "style": "rule-lighteval/MATH_v2"}
    return {
        "data_source": "math_dapo",
        "prompt": messages,
        "ability": "MATH",
        "reward_model": reward_model,
        "extra_info": {"index": index},
    }


# Rows 1-13: duplicates, a conflicting answer, a whitespace variant, Chinese, an untemplated prompt and
# four malformed rows (5: null prompt, 8: blank prompt, 9: no reward_model, 10: empty ground truth).
ROWS = [
    dapo_row(A, "5", "uuid-a"),
    dapo_row(A, "5", "uuid-a"),
    dapo_row(B, "12", "uuid-b"),
    dapo_row(Z, "7", "uuid-z"),
    dapo_row(None, "1", "uuid-x"),
    dapo_row(A, "5", "uuid-a"),
    dapo_row(B, "13", "uuid-b2"),
    dapo_row("   ", "3", "uuid-y", templated=False),
    dapo_row(C, ..., "uuid-c"),
    dapo_row(C, "", "uuid-c"),
    dapo_row(C, "42", "uuid-c"),
    dapo_row("Find  the value of $x$\nif $2x = 10$.", "5", "uuid-a2"),
    dapo_row(D, "4", "uuid-d", templated=False),
]


def write_parquet(path: Path, rows=ROWS) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)
    return path


@pytest.fixture
def dapo_parquet(tmp_path):
    return write_parquet(tmp_path / "dapo.parquet")


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def expected_row(problem, label, lang, index, template="dapo"):
    return {
        "id": problem_id(problem_key(problem)),
        "prompt": render_prompt(problem, template),
        "label": label,
        "source": "dapo-math-17k",
        "lang": lang,
        "problem": problem,
        "source_index": index,
    }


def test_counts_and_output_of_a_dapo_shaped_parquet(dapo_parquet, tmp_path):
    out = tmp_path / "out" / "train.jsonl"
    summary = prepare_dapo(str(dapo_parquet), out=out)

    assert summary.rows_read == 13
    assert dict(summary.malformed) == {
        "missing prompt": 1,
        "empty prompt": 1,
        "missing ground truth": 1,
        "empty ground truth": 1,
    }
    assert summary.duplicates == 4  # rows 2, 6, 7 and the whitespace variant 12
    assert summary.unique_problems == 5
    assert summary.unique_source_indices == 9
    assert summary.untemplated == 1
    assert summary.conflict_rows == 1 and list(summary.conflicts) == [problem_key(B)]
    assert dict(summary.langs) == {"en": 4, "zh": 1}
    assert summary.written == 5 and not summary.stopped_at_limit
    assert read_jsonl(out) == [
        expected_row(A, "5", "en", "uuid-a"),
        expected_row(B, "12", "en", "uuid-b"),
        expected_row(Z, "7", "zh", "uuid-z"),
        expected_row(C, "42", "en", "uuid-c"),
        expected_row(D, "4", "en", "uuid-d"),
    ]


def test_answer_conflicts_are_listed_beside_the_output(dapo_parquet, tmp_path):
    out = tmp_path / "train.jsonl"
    summary = prepare_dapo(str(dapo_parquet), out=out)
    assert summary.conflicts_file == conflicts_path(out) == tmp_path / "train.conflicts.jsonl"
    assert read_jsonl(summary.conflicts_file) == [
        {"id": problem_id(problem_key(B)), "problem": B, "kept": "12", "others": {"13": 1}}
    ]
    # A later run without conflicts removes the stale list.
    write_parquet(dapo_parquet, [dapo_row(A, "5", "a")])
    assert prepare_dapo(str(dapo_parquet), out=out).conflicts_file is None
    assert not conflicts_path(out).exists()


@pytest.mark.parametrize(("lang", "problems"), [("zh", [Z]), ("en", [A, B, C, D])])
def test_lang_filter_uses_cjk_detection(dapo_parquet, tmp_path, lang, problems):
    out = tmp_path / "train.jsonl"
    summary = prepare_dapo(str(dapo_parquet), out=out, lang=lang)
    assert [row["problem"] for row in read_jsonl(out)] == problems
    assert summary.filtered_by_lang == 5 - len(problems)


def test_limit_stops_after_that_many_rows(dapo_parquet, tmp_path):
    out = tmp_path / "train.jsonl"
    summary = prepare_dapo(str(dapo_parquet), out=out, limit=2)
    assert [row["problem"] for row in read_jsonl(out)] == [A, B]
    assert summary.stopped_at_limit and summary.rows_read == 3


def test_boxed_and_raw_templates(dapo_parquet, tmp_path):
    for template in ("boxed", "raw"):
        out = tmp_path / f"{template}.jsonl"
        prepare_dapo(str(dapo_parquet), out=out, template=template)
        assert read_jsonl(out)[0]["prompt"] == render_prompt(A, template)


def test_strict_stops_at_the_first_malformed_row_and_keeps_the_old_file(dapo_parquet, tmp_path):
    out = tmp_path / "train.jsonl"
    out.write_text("previous contents\n")
    with pytest.raises(UsageError, match=r"row 5 is malformed \(missing prompt\)"):
        prepare_dapo(str(dapo_parquet), out=out, strict=True)
    assert out.read_text() == "previous contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dapo.parquet", "train.jsonl"]


def test_multi_message_prompts_take_the_last_user_turn(tmp_path):
    system_and_user = [
        {"content": "You are a careful solver.", "role": "system"},
        {"content": render_prompt(A), "role": "user"},
    ]
    rows = [
        dapo_row(None, "5", "a", messages=system_and_user),
        dapo_row(None, "9", "s", messages=[{"content": "only a system turn", "role": "system"}]),
        dapo_row(None, "9", "e", messages=[]),
    ]
    source = write_parquet(tmp_path / "chat.parquet", rows)
    summary = prepare_dapo(str(source), out=tmp_path / "out.jsonl")
    assert [row["problem"] for row in read_jsonl(tmp_path / "out.jsonl")] == [A]
    assert dict(summary.malformed) == {"missing prompt": 2}


def test_jsonl_source_in_dapo_and_flat_layouts_with_bad_lines(tmp_path):
    lines = [
        json.dumps(dapo_row(A, "5", "a")),
        json.dumps(dapo_row(A, "5", "a")),
        "{not json",
        json.dumps({"prompt": 123, "label": "4"}),
        json.dumps({"prompt": render_prompt(B), "reward_model": {"ground_truth": ["12"]}}),
        json.dumps({"prompt": D, "label": 4}),
        json.dumps({"prompt": render_prompt(Z), "label": 7.0}),
        json.dumps(["a", "list"]),
        "",
    ]
    source = tmp_path / "dapo.jsonl"
    source.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    summary = prepare_dapo(str(source), out=out)
    assert summary.rows_read == 8
    assert dict(summary.malformed) == {"invalid JSON": 1, "wrong type": 3}
    assert summary.duplicates == 1
    assert [(row["problem"], row["label"], row["lang"]) for row in read_jsonl(out)] == [
        (A, "5", "en"),
        (D, "4", "en"),
        (Z, "7", "zh"),
    ]


def test_json_list_source(tmp_path):
    source = tmp_path / "rows.json"
    source.write_text(json.dumps([{"problem": A, "answer": "5"}, {"problem": A + " ", "answer": "5"}]))
    summary = prepare_dapo(str(source), out=tmp_path / "out.jsonl")
    assert (summary.written, summary.duplicates, summary.untemplated) == (1, 1, 1)


def test_missing_file_unknown_names_and_bad_limit(tmp_path):
    with pytest.raises(UsageError, match=r"no such file: .*missing\.parquet"):
        prepare_dapo(str(tmp_path / "missing.parquet"), out=tmp_path / "o.jsonl")
    with pytest.raises(UsageError, match="unknown template 'x'; choose one of: dapo, boxed, raw"):
        prepare_dapo(str(tmp_path / "missing.parquet"), template="x")
    with pytest.raises(UsageError, match="unknown language 'fr'; choose one of: all, en, zh"):
        prepare_dapo(str(tmp_path / "missing.parquet"), lang="fr")
    with pytest.raises(UsageError, match="unknown dataset 'gsm8k'; choose from: dapo-math-17k"):
        open_source(None, "gsm8k")
    with pytest.raises(UsageError, match="--limit must be a positive"):
        prepare_dapo(None, limit=0)


def test_parquet_without_usable_columns(tmp_path):
    source = tmp_path / "other.parquet"
    pq.write_table(pa.table({"text": ["a"], "score": [1]}), source)
    with pytest.raises(UsageError, match="no prompt/problem/question column; columns are text, score"):
        prepare_dapo(str(source), out=tmp_path / "o.jsonl")


def test_hub_source_without_network_says_how_to_pass_a_local_file(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(UsageError) as caught:
        open_source(None)
    message = str(caught.value)
    assert (
        "BytedTsinghua-SIA/DAPO-Math-17k" in message and "--source path/to/dapo-math-17k.parquet" in message
    )
    assert "\n" not in message


def test_hub_source_streams_the_loaded_dataset(monkeypatch, dapo_parquet, tmp_path):
    # The network is the only thing replaced: `datasets` builds a real Arrow-backed Dataset from the file.
    import datasets

    loaded = []

    def load_dataset(path, split):
        loaded.append((path, split))
        return datasets.Dataset.from_parquet(str(dapo_parquet), cache_dir=str(tmp_path / "cache"))

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    out = tmp_path / "hub.jsonl"
    summary = prepare_dapo(None, out=out)
    assert loaded == [("BytedTsinghua-SIA/DAPO-Math-17k", "train")]
    assert summary.source == "BytedTsinghua-SIA/DAPO-Math-17k"
    assert (summary.rows_read, summary.written, summary.duplicates) == (13, 5, 4)
    local = prepare_dapo(str(dapo_parquet), out=tmp_path / "local.jsonl")
    assert read_jsonl(out) == read_jsonl(local.out)


def test_damaged_parquet_is_a_usage_error(dapo_parquet, tmp_path):
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(dapo_parquet.read_bytes()[:-40])
    with pytest.raises(UsageError, match=r"damaged\.parquet: not a readable parquet file"):
        prepare_dapo(str(damaged), out=tmp_path / "o.jsonl")


def test_detect_lang():
    assert detect_lang(Z) == "zh"
    assert detect_lang("Let $f(x) = x^2$ — find f(3).") == "en"
    assert detect_lang("これは テスト") == "en"  # kana only: not a Chinese prompt


def test_summary_table_lists_every_count(dapo_parquet, tmp_path):
    from rich.console import Console

    summary = prepare_dapo(str(dapo_parquet), out=tmp_path / "o.jsonl", lang="en")
    console = Console(record=True, width=120)
    console.print(summary_table(summary))
    text = console.export_text()
    for expected in (
        "rows read",
        "malformed: missing prompt",
        "malformed: empty ground truth",
        "duplicates dropped",
        "answer conflicts (problems / rows)",
        "1 / 1",
        "en 4, zh 1",
        "dropped by --lang en",
        "rows written",
    ):
        assert expected in text


problem_texts = st.sampled_from([A, B, C, D, Z, "Evaluate $3^4$.", "求 $1+1$。"])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(problem_texts, st.integers(0, 3), st.booleans()), min_size=1, max_size=40))
def test_dedup_invariants(rows):
    """Every distinct problem is written once, with the first answer seen; the rest are duplicates."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "rows.jsonl"
        lines = [json.dumps(dapo_row(p + (" " if pad else ""), str(a), f"i{a}")) for p, a, pad in rows]
        source.write_text("\n".join(lines), encoding="utf-8")
        summary = prepare_dapo(str(source), out=Path(tmp) / "out.jsonl")
        written = read_jsonl(Path(tmp) / "out.jsonl")

    first_answer: dict[str, str] = {}
    for problem, answer, _ in rows:
        first_answer.setdefault(problem, str(answer))
    assert [(row["problem"], row["label"]) for row in written] == list(first_answer.items())
    assert summary.duplicates == len(rows) - len(first_answer)
    assert summary.conflict_rows == sum(str(a) != first_answer[p] for p, a, _ in rows)
    assert summary.langs["zh"] + summary.langs["en"] == len(first_answer)


# --- the command line ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_writes_the_file_and_prints_the_summary(dapo_parquet, tmp_path):
    done = run_infoppo("data", "prep", "dapo-math-17k", "--source", str(dapo_parquet), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(read_jsonl(tmp_path / "data" / "dapo-math-17k.jsonl")) == 5  # the default --out
    assert "duplicates dropped" in done.stdout and "answer conflicts in 1 problem(s)" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--source", "missing.parquet"], "error: no such file: missing.parquet"),
        (["--source", "{parquet}", "--strict"], "error: {parquet}: row 5 is malformed (missing prompt)"),
        (["--source", "{parquet}", "--template", "chatml"], "error: unknown template 'chatml'"),
        (["--source", "{parquet}", "--lang", "fr"], "error: unknown language 'fr'"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(dapo_parquet, tmp_path, extra, message):
    extra = [arg.replace("{parquet}", str(dapo_parquet)) for arg in extra]
    done = run_infoppo("data", "prep", "dapo-math-17k", *extra, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.rstrip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.replace("{parquet}", str(dapo_parquet)))
    assert "Traceback" not in done.stderr


def test_verl_layout_instruction_is_stripped_and_golds_are_stored_normalised(tmp_path):
    # verl's math_dataset.py appends its instruction to the problem; the gold goes through the grader's
    # normaliser (infoppo_cli.grading.normalise_answer), so "33\,124\,147" is stored as the grader reads it.
    baked = "What is $2+2$? Let's think step by step and output the final answer within \\boxed{}."
    rows = [dapo_row(baked, "33\\,124\\,147", "v", templated=False), dapo_row(B, "336^\\circ", "w")]
    source = write_parquet(tmp_path / "verl.parquet", rows)
    prepare_dapo(str(source), out=tmp_path / "out.jsonl")
    written = read_jsonl(tmp_path / "out.jsonl")
    assert [row["problem"] for row in written] == ["What is $2+2$?", B]
    assert written[0]["prompt"] == render_prompt("What is $2+2$?")
    assert "Let's think" not in written[0]["prompt"]
    assert [row["label"] for row in written] == ["33124147", "336"]
