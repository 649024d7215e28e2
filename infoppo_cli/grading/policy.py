"""Every grading decision where the field differs, written once: ``POLICY``, entry by entry.

Each entry says what infoppo's grader does where math-verify's and lighteval's test suites, DAPO's
normaliser or other graders disagree, or where a choice was needed; tests/grading/test_verify.py tests
each, and the case table (tests/grading/cases.jsonl) cites an entry for every row decided by it. The code
that carries each decision out is in :mod:`~infoppo_cli.grading.normalise` (what is dropped or
rewritten), :mod:`~infoppo_cli.grading.rounding` (decimals at their written precision) and
:mod:`~infoppo_cli.grading.verify` (parts, and the rest).
"""

from __future__ import annotations

POLICY: dict[str, str] = {
    "thousands separators": (
        "When the gold is an integer (written as one, or as a power such as 10^4 whose value is one), digit "
        "groups of three separated by a thin space (\\,), a space, ~, {,} or ,\\! are one number "
        "(33\\,124\\,147 = 33124147; 10\\,000 = 10^4). A plain comma followed by three digits is a "
        "separator as math-verify reads it (1,625 = 1625); a comma followed by a space separates a list."
    ),
    "decimal commas": (
        "Not accepted: 1000,99 is the list {1000, 99}, never 1000.99, because in a competition answer a "
        "comma separates values; a comma followed by exactly three digits is read as math-verify's LaTeX "
        "reader reads it (1,625 = 1625; 0,111 = 0.111). math-verify's test suite accepts 1000,99 = 1000.99."
    ),
    "scientific notation": (
        "1e3, 2.5e-3 and 7E6 (digits, e or E and an integer exponent, nothing joined on either side) are "
        "the numbers they name, on both sides, read exactly (2.5e-3 = 0.0025). e anywhere else is Euler's "
        "number, as math-verify reads it: 3e is 3e (about 8.15, not 1e3), e^{2} is e squared."
    ),
    "degrees": "^\\circ, ^{\\circ} and ° are dropped from both sides (AIME25's gold 336^\\circ = 336).",
    "percent": (
        "\\%, %, percent and pct after a number are dropped from both sides: 28\\% = 28, as AIME-style "
        "answers mean it, and 0.28 is not 28\\%."
    ),
    "units and words": (
        "After a number, \\text{…}, \\mathrm{…}, \\mbox{…} (with an optional ^2 or ^3) and common unit words "
        "(dollars, cm, m², square units, ways …) are dropped from both sides, as DAPO's normaliser does; so "
        "are currency signs ($, \\$, €, £, ¥) around a number."
    ),
    "modular answers": "A trailing \\pmod{m}, \\bmod m or (mod m) is dropped: 9 \\pmod{11} = 9.",
    "multiple-choice letters": (
        "Letters compare as symbols after math-verify's normalisation: (C), \\text{C} and C are equal."
    ),
    "sets versus tuples": (
        "As math-verify: a list written without brackets (1, 2, 3 or several adjacent boxes) is a set and "
        "matches the gold set in any order; a tuple (1,3) is ordered and a set {1,3} equals it only when "
        "written in the same order."
    ),
    "multiple boxes": (
        "Boxes of one final statement are joined into a list: only commas, semicolons, and/or, delimiters, "
        "part labels ('for part (a) and'), a name assigned (y_2 =) and one word after a box ('papers and') "
        "between them. A box separated from the last by any other text ('was wrong; actually', a full "
        "stop) is an earlier attempt and is ignored (see infoppo_cli.grading.parts)."
    ),
    "multi-part answers": (
        "Parts labelled (a), (b) … (or (i), (1)), in boxes or in one answer, are compared part by part: in "
        "order when the gold labels its parts (never as math-verify's product a*3*b*5), as a set when the "
        "gold is an unlabelled list; a gold of one part is compared with the last part. Parts that are "
        "lists themselves, separated by ; or 'and' (p=5,q=2;p=7,q=2), are compared as a set of parts."
    ),
    "matrices": (
        "Matrix environments compare by content: pmatrix, bmatrix, Bmatrix, matrix, smallmatrix, array and "
        "the starred forms are one matrix, row spacing (\\\\[2pt]) and \\hline dropped, on an Answer: line "
        "without $ too; vmatrix and Vmatrix are determinants, read as numbers."
    ),
    "trailing backslashes": (
        "A stray backslash or line break (\\\\) at the end of an answer is dropped, inside a closing $ too: "
        "a gold 5\\ is 5 (before, every response to it was an error)."
    ),
    "rounded decimal golds": (
        "A gold decimal stands for every number that rounds to it at the places it is written with: "
        "100/3 matches 33.3, 2/3 and 0.6667 match 0.67, 0.7 does not; entries of matrices, tuples, "
        "intervals and sets alike; a decimal of zeros (27.0) is an integer. Below six significant digits "
        "the precision is the gold's only: 0.33 does not match a gold 1/3 (see 'long decimals')."
    ),
    "long decimals": (
        "A predicted decimal of six significant digits or more (math-verify's 6 places, counted from the "
        "first nonzero digit so that size does not matter) stands for the gold rounded at its places: "
        "0.6666667 and x = 0.6666667 match 2/3, 66666.67 matches 200000/3; a truncated 0.666666 does not, "
        "nor do 0.6667 or 2.6667 (too few digits to set a precision) for 2/3 or 8/3."
    ),
    "multi-line golds": "Line breaks are white space: a gold matrix over several lines is read whole.",
    "no anchor, no answer": (
        "Only a box, an Answer: line or 'final answer is' is read; a bare number in the text is never taken."
    ),
    "overlong answers": (
        "An answer longer than 1,000 characters (or four times the gold, when that is longer) is wrong "
        "without being parsed: no competition answer is written so (verl's math_dapo reads only a "
        "response's last 300 characters for the same reason), and math-verify can take seconds on such "
        "text, a collapsing policy's output."
    ),
}
"""Every grading decision where the field differs, in one place (tests/grading/test_verify.py tests each)."""
