"""Answers with several parts: which boxes join into one answer, and how an answer splits into parts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli.grading import extract, grade
from infoppo_cli.grading.parts import LABEL, Parts, joinable, label_run, split_parts


@pytest.mark.parametrize(
    ("gap", "joins"),
    [
        (", ", True),
        ("", True),
        ("$ and $", True),
        (" \\quad \\text{and} \\quad ", True),
        (" \\text{ for part (a) and } ", True),  # math-verify's test_open_thoughts
        (" \\) and \\( y_2 = ", True),
        (" papers and ", True),  # one word after the earlier box (a unit, a noun)
        (" cm; ", True),
        (" (b) ", True),
        (" no no no no no ", False),  # math-verify's test_open_thoughts: not one answer
        (" and and and or thus but ", False),  # lighteval's numina cases: the first box is not part of it
        (" was wrong; actually ", False),
        (". No wait: the answer is ", False),
        (", which gives ", False),
        (" then ", False),
        (", and the answer is ", False),  # a sentence, not a connective
        (" \\Rightarrow ", False),
        (", 2, ", False),  # a number outside the boxes
        (",\n\n", False),  # a blank line ends the statement
        (", " * 70, False),  # too long to be a connective
    ],
)
def test_joinable(gap, joins):
    assert joinable(gap) is joins


@pytest.mark.parametrize(
    ("answer", "parts"),
    [
        ("(a) 3; (b) 5", Parts(("3", "5"), "labelled")),
        ("(a) 3 (b) 5", Parts(("3", "5"), "labelled")),
        ("\\textbf{(a)} 12, \\textbf{(b)} 7", Parts(("12", "7"), "labelled")),
        ("**(i)** 2 and **(ii)** \\frac{1}{2}", Parts(("2", "\\frac{1}{2}"), "labelled")),
        ("(1) x=2 (2) y=3", Parts(("x=2", "y=3"), "labelled")),
        ("$(a) 3, (b) 5$", Parts(("3", "5"), "labelled")),
        ("(b) 3 (c) 4", Parts(("(b) 3 (c) 4",), "single")),  # labels count from the first of their scheme
        ("x (a) 3 (b) 4", Parts(("x (a) 3 (b) 4",), "single")),  # text before the first label
        ("f(a) + f(b)", Parts(("f(a) + f(b)",), "single")),  # arguments are not labels
        ("p=5,q=2;p=7,q=2", Parts(("p=5,q=2", "p=7,q=2"), "groups")),
        (
            "\\boxed{ p = 5, q = 2 \\quad \\text{and} \\quad p = 7, q = 2}",
            Parts(("p = 5, q = 2", "p = 7, q = 2"), "groups"),
        ),
        ("-12;-11;-10", Parts(("-12;-11;-10",), "single")),  # no part is a list: math-verify reads it whole
        ("3, 5", Parts(("3", "5"), "list")),
        ("(3, 5), (1, 2)", Parts(("(3, 5)", "(1, 2)"), "list")),
        ("(3, 5)", Parts(("(3, 5)",), "single")),
        ("\\{1, 2\\}", Parts(("\\{1, 2\\}",), "single")),
        ("$a$ and $b$", Parts(("$a$ and $b$",), "single")),  # two delimited spans, not one wrapped
        ("\\boxed{a} and \\boxed{b}", Parts(("\\boxed{a} and \\boxed{b}",), "single")),
    ],
)
def test_split_parts(answer, parts):
    assert split_parts(answer) == parts


def test_label_run_counts_up_from_the_first_label_of_its_scheme():
    def names(text: str) -> list[str]:
        return [label.group("name") for label in label_run(list(LABEL.finditer(text)))]

    assert names("(a) x (b) y (c) z") == ["a", "b", "c"]
    assert names("(i) x (ii) y") == ["i", "ii"]
    assert names("(a) x (c) y") == []
    assert names("(a) x") == []  # one label is not several parts
    assert names("(a) x (b) y (a) z (b) w") == ["a", "b"]  # the last run
    assert names("(1) x (b) y") == []


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("(a) \\boxed{3} (b) \\boxed{5}", "(a) 3; (b) 5"),
        ("For part (a): \\boxed{12}. For part (b): \\boxed{7}.", "(a) 12; (b) 7"),
        ("**(a)** The area is $\\boxed{12}$.\n\n**(b)** The perimeter is $\\boxed{14}$.", "(a) 12; (b) 14"),
        ("(a) first \\boxed{2}, so \\boxed{3} (b) \\boxed{5}", "(a) 3; (b) 5"),  # a part's last box
        ("(a) \\boxed{1} and \\boxed{2} (b) \\boxed{5}", "(a) 1, 2; (b) 5"),
        ("Case (a) gives 3. Case (b) gives \\boxed{5}", "5"),  # a label without a box: one answer
        ("(a) \\boxed{3} (b) I could not finish.", "3"),
        ("(a) \\boxed{3} (c) \\boxed{5}", "3, 5"),  # (c) does not follow (a): an unlabelled list
    ],
)
def test_boxes_under_labels_are_one_answer_with_labelled_parts(response, answer):
    found = extract(response)
    assert found is not None and found.answer == answer


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-99, 99), min_size=2, max_size=5, unique=True), st.sampled_from(["abc", "roman"]))
def test_labelled_parts_are_compared_in_order(values, scheme):
    names = list("abcde") if scheme == "abc" else ["i", "ii", "iii", "iv", "v"]
    labelled = " ".join(f"({name}) {value}" for name, value in zip(names, values, strict=False))
    response = "Work.\n" + " ".join(
        f"({name}) \\boxed{{{v}}}" for name, v in zip(names, values, strict=False)
    )
    assert grade(response, labelled).correct
    assert grade(response, ", ".join(str(v) for v in reversed(values))).correct  # an unlabelled gold: a set
    swapped = values[1:] + values[:1]
    response_swapped = " ".join(f"({name}) \\boxed{{{v}}}" for name, v in zip(names, swapped, strict=False))
    assert not grade(response_swapped, labelled).correct
    assert not grade(response, labelled.rsplit(" (", 1)[0]).correct  # one part fewer
