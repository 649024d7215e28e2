"""Extraction: the final answer span, anchored only (box, Answer: line, "final answer is")."""

from __future__ import annotations

import sys

import pytest
from box_reference import rescanning_boxes
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import extract, extract_answer, final_text
from infoppo_cli.grading.extract import _box_contents

# --- extraction ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("so the answer is \\boxed{540}.", "540"),
        ("First \\boxed{100} was wrong; actually \\boxed{721}", "721"),  # two boxes on one line
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),  # nested braces
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),  # escaped braces do not close the box
        ("\\boxed {42}", "42"),
        ("\\fbox{42}", "42"),
        ("Step 1 ...\n\nAnswer: 540", "540"),
        ("**Answer:** 540", "540"),
        ("Answer: $540$.", "540"),
        ("answer:\n  12", "12"),
        ("Answer: \\boxed{7}", "7"),
        ("\\boxed{5}, then checked.\nAnswer: 7", "7"),  # the later marker wins
        ("Answer: 7\nLet me box it: \\boxed{5}", "5"),
        ("Answer: 540<|im_end|>", "540"),
        ("<think>maybe \\boxed{3}</think>The answer is \\boxed{5}", "5"),
    ],
)
def test_extract_answer(response, answer):
    assert extract_answer(response) == answer


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 204.",  # no anchor: never read a bare number
        "... 204 - ... I am still thinking and the answer is",  # truncated
        "First \\boxed{12} then the final \\boxed{13",  # the last box was cut off mid-answer
        "Answer: 3, or rather \\boxed{4",
        "\\boxed{}",
        "<think>I think \\boxed{3} but let me check",  # reasoning never finished
        "",
    ],
)
def test_extract_answer_finds_nothing(response):
    assert extract_answer(response) is None


def test_final_text_strips_special_tokens_and_reasoning():
    assert final_text("<think>a</think>b<|endoftext|>") == "b"
    assert final_text("<think>unfinished") is None
    assert final_text("plain</s>") == "plain"


_prose = st.text(alphabet=st.characters(blacklist_characters="\\:{}<>|$*"), max_size=200)


@given(_prose, st.integers(-(10**6), 10**6))
def test_extraction_reads_only_the_final_marker(text, n):
    assert extract_answer(text) is None
    assert extract_answer(f"{text}\n\\boxed{{{n}}}") == str(n)
    assert extract_answer(f"{text}\nAnswer: {n}") == str(n)
    assert extract_answer(f"\\boxed{{{n + 1}}} was wrong {text} \\boxed{{{n}}}") == str(n)


# --- which span is read: an Answer: line, the last box, a final-answer phrase -------------------------


@pytest.mark.parametrize(
    ("response", "span", "source"),
    [
        ("Answer: $4\\sqrt{2}$", "$4\\sqrt{2}$", "line"),  # delimiters kept: read as LaTeX, whole
        ("Answer: \\[ \n 9 \n \\]", "\\[ \n 9 \n \\]", "line"),  # display math followed onto next lines
        ("Answer:\n$$\n9\n$$\nDone.", "$$\n9\n$$", "line"),
        ("**Answer:**\n\n 12", "12", "line"),
        ("\\boxed{1}, \\boxed{2}, \\boxed{3}", "\\boxed{1, 2, 3}", "box"),  # adjacent boxes: one list
        ("$\\boxed{1}$ and $\\boxed{2}$.", "\\boxed{1, 2}", "box"),
        ("So \\boxed{1}. Checking again, it is \\boxed{2}", "\\boxed{2}", "box"),  # a later box wins
        ("\\boxed{\\boxed{5}}", "\\boxed{\\boxed{5}}", "box"),
        ("$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$", "\\boxed{(3, 3), (1, 1)}", "box"),
        ("\\boxed{1} papers and \\boxed{2} bins", "\\boxed{1, 2}", "box"),  # one word after a box
        ("\\boxed{1} no no no no no \\boxed{2}", "\\boxed{2}", "box"),
        ("(a) \\boxed{3} (b) \\boxed{5}", "\\boxed{(a) 3; (b) 5}", "box"),  # labelled parts
        ("So the final answer is $34$. I hope it is correct.", "$34$", "phrase"),
        ("The final answer is 7", "7", "phrase"),
    ],
)
def test_extract_spans(response, span, source):
    found = extract(response)
    assert found is not None and (found.span, found.source) == (span, source)


def test_answer_line_with_a_sentence_keeps_the_sentence_for_math_verify():
    found = extract("Answer: The area is $4\\sqrt{2}$ square units.")
    assert found.span == "The area is $4\\sqrt{2}$ square units."
    assert found.answer == "The area is $4\\sqrt{2}$ square units"


def test_a_box_or_line_beats_the_final_answer_phrase():
    assert extract_answer("The final answer is 3.\nAnswer: 4") == "4"
    assert extract_answer("The final answer is 3, so \\boxed{5}") == "5"


# --- Minerva's answer line, boxes between math delimiters ---------------------------------------------


@pytest.mark.parametrize(
    ("response", "span"),
    [
        ("Final Answer: The final answer is 12,000,023. I hope it is correct.", "12,000,023"),
        ("Final Answer: The final answer is $\\frac{2}{3}$. I hope it is correct.", "$\\frac{2}{3}$"),
        ("Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct.", None),
        ("\\(\\boxed{1}\\) and \\(\\boxed{-2}\\).", "\\boxed{1, -2}"),
        ("\\[\\boxed{1}\\], \\[\\boxed{2}\\]", "\\boxed{1, 2}"),
    ],
)
def test_minerva_lines_and_boxes_joined_across_delimiters(response, span):
    found = extract(response)
    expected = "Jane started growing Sphere 3 hours ago" if span is None else span
    assert found is not None and found.span == expected


# --- linear time: one pass over the braces, whatever the shape ------------------------------------------


_PIECES = ["\\boxed{", "\\fbox {", "{", "}", "\\{", "\\}", "\\\\", "\\", "12", " ", ", ", "$", " and ", "x"]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_one_pass_finds_the_same_boxes_as_rescanning_from_every_opening(pieces):
    text = "".join(pieces)
    assert _box_contents(text) == rescanning_boxes(text)


def _lines_run(function, *args) -> int:
    """Python lines executed in ``function``'s own module while ``function(*args)`` runs."""
    count = 0
    module = function.__code__.co_filename

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != module:
            return None

        def local(frame, event, arg):
            nonlocal count
            count += event == "line"
            return local

        return local

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        function(*args)
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize(
    "unit",
    ["\\boxed{", "\\fbox{", "\\boxed{1}", "\\boxed{1}, ", "{", "\\boxed ", "Answer: 5\n", "final answer is "],
)
def test_extraction_work_grows_linearly_with_a_degenerate_response(unit):
    small, large = _lines_run(extract, unit * 500), _lines_run(extract, unit * 1000)
    assert large <= 2.2 * small + 50, (small, large)
    assert _lines_run(rescanning_boxes, "\\boxed{" * 200) > 4 * _lines_run(_box_contents, "\\boxed{" * 200)
