"""`infoppo grade`: one response explained, a samples file re-graded, bad input as one error line; what is
printed is bounded and its control characters escaped, however long or hostile the response."""

from __future__ import annotations

import json

import pytest
from cli_process import run_infoppo

from infoppo_cli.cli import entry as cli
from infoppo_cli.grading.review import JSON_CHARS, SHOWN_CHARS

pytestmark = pytest.mark.usefixtures("shared_grading_workers")  # in-process runs: warm workers


@pytest.mark.slow
def test_one_response_shows_span_readings_and_verdict():
    done = run_infoppo("grade", "--gold", "4", "Some work.\nAnswer: $4\\sqrt2$")
    assert done.returncode == 1, done.stderr  # wrong: exit 1, like cmp for files that differ
    out = done.stdout
    assert "$4\\sqrt2$" in out and "last Answer: line" in out
    assert "4*sqrt(2)" in out and "incorrect (wrong)" in out


def _main(*args: str, code: int = 0) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(list(args))
    assert info.value.code == code


def test_one_response_as_json(capsys):
    _main("grade", "--gold", "1024", "Answer: $2^{10}$", "--json")
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == {"correct": True, "extracted": "2^{10}", "reason": "correct"}
    assert result["reading"]["source"] == "line" and result["reading"]["span"] == "$2^{10}$"


def _samples(tmp_path):
    rows = [
        {
            "bench": "aime24",
            "id": "p1",
            "sample": 0,
            "response": "\\boxed{540}",
            "gold": "540",
            "extracted": "540",
            "correct": True,
            "reason": "correct",
        },
        {
            "bench": "aime24",
            "id": "p1",
            "sample": 1,
            "response": "Answer: $4\\sqrt{2}$",
            "gold": "4",
            "extracted": "4",
            "correct": True,
            "reason": "correct",
        },  # graded by prefix by the old grader
        {
            "bench": "aime24",
            "id": "p2",
            "sample": 0,
            "response": "no idea",
            "gold": "7",
            "extracted": None,
            "correct": False,
            "reason": "no_answer",
        },
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.slow
def test_file_summary_and_only_wrong(tmp_path):
    done = run_infoppo("grade", "--file", str(_samples(tmp_path)), "--only", "wrong", "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert "3 sample(s): correct 1, wrong 1, no_answer 1; 1 verdict(s) differ from the file" in done.stdout
    assert "aime24/p1#1" in done.stdout and "aime24/p1#0" not in done.stdout


def test_file_as_json_lists_changed_cases(tmp_path, capsys):
    _main("grade", "--file", str(_samples(tmp_path)), "--only", "changed", "--json", "--workers", "1")
    result = json.loads(capsys.readouterr().out)
    assert result["total"] == 3 and result["changed"] == 1
    assert result["reasons"] == {"correct": 1, "wrong": 1, "no_answer": 1, "timeout": 0, "error": 0}
    [case] = result["cases"]
    assert case["where"] == "aime24/p1#1" and case["stored_correct"] is True and case["correct"] is False


@pytest.mark.slow
def test_bad_input_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": "x"}\n', encoding="utf-8")
    for args, message in [
        (("grade",), "give a RESPONSE and its --gold answer"),
        (("grade", "x", "--gold", "1", "--file", str(bad)), "not both"),
        (("grade", "--file", str(tmp_path / "none.jsonl")), "is not a file"),
        (("grade", "--file", str(bad)), "bad.jsonl:1: no text field gold"),
        (("grade", "--file", str(bad), "--only", "maybe"), "--only takes one of"),
    ]:
        done = run_infoppo(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("response", "gold", "code", "reason"),
    [
        ("So \\boxed{12}.", "12", 0, "correct"),
        ("Answer: 13", "12", 1, "wrong"),
        ("I do not know.", "12", 1, "no_answer"),
        ("", "12", 1, "no_answer"),
    ],
)
def test_one_response_exits_like_cmp(response, gold, code, reason, capsys):
    _main("grade", "--gold", gold, response, "--json", code=code)
    assert json.loads(capsys.readouterr().out)["verdict"]["reason"] == reason


def test_an_empty_gold_is_bad_input_and_the_help_says_the_exit_codes(capsys, monkeypatch):
    for gold in ("", "  "):
        _main("grade", "--gold", gold, "Answer: 4", code=2)
        assert (
            capsys.readouterr().err.strip() == "error: --gold is empty; give the gold answer to grade against"
        )
    monkeypatch.setenv("COLUMNS", "200")
    _main("grade", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "0 if the response is correct, 1 if not (wrong, no answer), 2 for bad input" in help_text


def test_a_huge_span_is_printed_cut_with_its_length_and_still_graded(capsys):
    response = "Work.\nAnswer: " + "1" * 300_000
    _main("grade", "--gold", "7", response, code=1)
    out = capsys.readouterr().out
    assert len(out) < 4 * SHOWN_CHARS  # the span's ends and the table, not 300,000 characters
    assert "(cut: the first and last 1,000 of 300,000 characters)" in " ".join(out.split())
    assert "incorrect (wrong)" in out


def test_a_huge_response_with_a_short_answer_is_graded_correct(capsys):
    _main("grade", "--gold", "7", "x " * 500_000 + "\nAnswer: 7")
    out = capsys.readouterr().out
    assert "correct (correct)" in out and len(out) < 2 * SHOWN_CHARS


def test_control_and_bidi_characters_are_printed_as_escapes(capsys):
    unsafe = "\x1b[2J\u202e\u2066\r\x07"
    _main("grade", "--gold", f"7{unsafe}", f"Answer: 7 {unsafe}", code=1)
    out = capsys.readouterr().out
    assert not set("\x1b\u202e\u2066\r\x07") & set(out)
    assert "\\x1b[2J\\u202e\\u2066\\x0d\\x07" in out.replace("\n", "")


def test_json_is_bounded_and_names_what_it_cut(capsys):
    response = "Answer: " + "1" * (3 * JSON_CHARS)
    _main("grade", "--gold", "7", response, "--json", code=1)
    out = capsys.readouterr().out
    result = json.loads(out)
    assert result["cut"] == {"verdict.extracted": 3 * JSON_CHARS, "reading.span": 3 * JSON_CHARS}
    assert result["verdict"]["reason"] == "wrong" and " … " in result["reading"]["span"]
    assert len(out) < 3 * JSON_CHARS


def test_file_cases_are_printed_cut_and_escaped(tmp_path, capsys):
    rows = [{"response": "Answer: \u202e" + "2" * 50_000, "gold": "7"}]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    _main("grade", "--file", str(path), "--workers", "1")
    out = capsys.readouterr().out
    assert len(out) < 4 * SHOWN_CHARS and "\u202e" not in out and "\\u202e" in out
    assert "of 50,001 characters" in " ".join(out.split())
