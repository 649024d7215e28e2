"""Grading time of degenerate responses (a collapsing policy's output), before and after, in one run.

A policy that collapses during training writes things like `\\boxed{` 5,000 times in a row. Reading the
final answer used to rescan the rest of the response from every unclosed box (quadratic: 14-19 s for
35 KB), and Minerva's "I hope it is correct" was cut off with a regex that was quadratic in a run of
white space. This script times, on the same inputs:

1. before: those two pieces as they were (`rescanning_boxes` in tests/support, `OLD_HOPE`, kept only to
   measure against), on `\\boxed{` repeated 1,000 / 2,000 / 5,000 times and on a 40,000-space answer line;
2. after: `extract` and the whole `grade` (in this process, median of several runs) on a dozen
   degenerate shapes of 40,000 characters each; target: each grades in under 50 ms;
3. after, as training sees it: 20 responses of `\\boxed{` × 10,000 (~70 KB, about 10k tokens each)
   through `grade_many` with 2 worker processes (before: over 120 s).

    .venv/bin/python benchmarks/bench_grading_degenerate.py
    .venv/bin/python benchmarks/bench_grading_degenerate.py --quick   # skips the slow "before" sizes
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

from infoppo_cli.grading import GradingPool, extract, grade, grade_many

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from box_reference import rescanning_boxes  # noqa: E402

TARGET_MS = 50.0
SIZE = 40_000

OLD_HOPE = re.compile(r"\.?\s*I hope it is correct.*$", re.IGNORECASE | re.S)


def shapes() -> dict[str, str]:
    """Degenerate responses of about ``SIZE`` characters, one per shape."""

    def fill(unit: str, prefix: str = "", suffix: str = "") -> str:
        return prefix + unit * ((SIZE - len(prefix) - len(suffix)) // len(unit)) + suffix

    return {
        "\\boxed{ repeated": fill("\\boxed{"),
        "\\fbox{ repeated": fill("\\fbox{"),
        "\\boxed{1} repeated": fill("\\boxed{1}"),
        "\\boxed{1}, joined": fill("\\boxed{1}, "),
        "\\boxed without braces": fill("\\boxed 5 "),
        "Answer: lines": fill("Answer: 5\n"),
        "nested braces in a box": "\\boxed{" + "{" * (SIZE // 2 - 4) + "}" * (SIZE // 2 - 4) + "}",
        "unclosed braces": fill("{", "\\boxed{"),
        "huge number in a box": fill("9", "\\boxed{", "}"),
        "huge number, separators": fill("999,", "\\boxed{", "9}"),
        "final answer + spaces": fill(" ", "The final answer is 5", "."),
        "\\( on an Answer: line": fill("\\(", "Answer: "),
        "'final answer is' repeated": fill("final answer is "),
    }


def median_ms(function, *args, repeats: int = 5) -> float:
    function(*args)  # warm: imports, caches
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def once_s(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def before(quick: bool) -> None:
    print("before (the previous box finder and 'I hope it is correct' regex):")
    counts = (1_000, 2_000) if quick else (1_000, 2_000, 5_000)
    for count in counts:
        text = "\\boxed{" * count
        seconds = once_s(rescanning_boxes, text)
        print(f"  rescanning boxes, \\boxed{{ x {count:>5,} ({len(text):>6,} chars): {seconds:8.2f} s")
    spaces = "x" + " " * (10_000 if quick else SIZE)
    seconds = once_s(OLD_HOPE.sub, "", spaces)
    print(f"  old hope regex on a {len(spaces):,}-char answer line of spaces:        {seconds:8.2f} s")


def after() -> bool:
    print(f"after: each shape {SIZE:,} characters; extract and grade in this process (median of 5)")
    print(f"  {'shape':30}{'extract':>12}{'grade':>12}  verdict")
    meets = True
    for name, text in shapes().items():
        extract_ms, grade_ms = median_ms(extract, text), median_ms(grade, text, "5")
        meets &= grade_ms < TARGET_MS
        print(f"  {name:30}{extract_ms:>9.2f} ms{grade_ms:>9.2f} ms  {grade(text, '5').reason}")
    for count in (5_000, 10_000, 20_000):
        text = "\\boxed{" * count
        print(
            f"  \\boxed{{ x {count:>6,} ({len(text):>7,} chars): grade {median_ms(grade, text, '5'):7.2f} ms"
        )
    return meets


def through_the_pool() -> None:
    pairs = [("\\boxed{" * 10_000 + f" {i}", str(i)) for i in range(20)]
    started = time.perf_counter()
    verdicts = grade_many(pairs, workers=2)
    cold = time.perf_counter() - started
    with GradingPool(workers=2) as pool:
        pool.start()
        started = time.perf_counter()
        pool.grade(pairs)
        warm = time.perf_counter() - started
    reasons = sorted({verdict.reason for verdict in verdicts})
    print(
        f"  20 x 70 KB degenerate responses, 2 workers: grade_many {cold:.2f} s (with start-up), "
        f"started pool {warm:.3f} s; verdicts {reasons}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="skip the slowest 'before' measurements")
    args = parser.parse_args()
    before(args.quick)
    meets = after()
    through_the_pool()
    print(
        f"target: every {SIZE:,}-char degenerate response grades in < {TARGET_MS:.0f} ms: "
        f"{'meets' if meets else 'MISSES'}"
    )


if __name__ == "__main__":
    main()
