"""Benchmark the shared grader on one full evaluation's worth of responses, 1 worker vs 2.

A full `infoppo eval --bench all --samples 16` grades 16 × (40 + 30 + 30 + 30 + 100) = 3,680 responses.
This script builds that many synthetic responses with a realistic mix (long chains of thought ending in
`\\boxed{}` or DAPO's `Answer:` line, right and wrong answers, fractions against decimals, units and
degrees, truncated responses without an answer, and a few pathological answers that make math-verify
run until its timeout), grades them with `grade_many` using 1 and then 2 worker processes
(GradingPool), and prints both times, responses/s and the speed-up. Targets: ≤ 10 s with 2 workers and a
speed-up ≥ 1.7×.

    .venv/bin/python benchmarks/bench_grading.py
    .venv/bin/python benchmarks/bench_grading.py --pathological 0   # the ordinary responses alone
    .venv/bin/python benchmarks/bench_grading.py --cases            # agreement with the case table

`--cases` grades the case table instead (tests/grading/cases.jsonl: cases from other projects' grader
suites, each citing its source) and prints the grader's agreement with the suites on the independent rows
(those not marked as a policy decision), on every row, and per tagged class of answers the grader once
got wrong (matrices, trailing backslash, multi-part, rounded decimal gold, scientific notation, power
and value, long decimal). tests/grading/test_cases.py asserts the same agreement is at least 99%.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

from infoppo_cli.grading import DEFAULT_TIMEOUT, GradingPool, grade, grade_many

BENCH_SIZES = {"amc23": 40, "aime24": 30, "aime25": 30, "aime26": 30, "beyondaime": 100}
SAMPLES = 16
TARGET_SECONDS, TARGET_SPEEDUP = 10.0, 1.7

_STEPS = (
    r"Let $x$ be the number of ways. Then $x^2 - {a}x + {b} = 0$, "
    r"so $x = \frac{{{a} \pm \sqrt{{{a}^2 - 4\cdot {b}}}}}{{2}}$.",
    r"By Vieta, $r_1 + r_2 = {a}$ and $r_1 r_2 = {b}$, hence $r_1^2 + r_2^2 = {a}^2 - 2\cdot{b}$.",
    r"Consider the triangle with sides ${a}$, ${b}$ and $c$; by the law of cosines "
    r"$c^2 = {a}^2 + {b}^2 - 2\cdot{a}\cdot{b}\cos\theta$.",
    r"Modulo $1000$ we have $2^{{{a}}} \equiv {b} \pmod{{1000}}$, which we verify by repeated squaring.",
    "Wait, let me double-check this step. Counting the cases again gives {a} + {b} configurations in total.",
    r"\[\sum_{{k=1}}^{{{a}}} k = \frac{{{a}({a}+1)}}{{2}} = {b}.\]",
)


def _chain_of_thought(rng: random.Random, paragraphs: int) -> str:
    lines = [
        rng.choice(_STEPS).format(a=rng.randint(2, 99), b=rng.randint(2, 999)) for _ in range(paragraphs)
    ]
    return "\n\n".join(lines)


def _response(rng: random.Random, gold: int, sample: int) -> str:
    """One response of a realistic kind for a problem whose answer is ``gold``."""
    cot = _chain_of_thought(rng, rng.randint(5, 60)) + f"\n\n(sample {sample})\n\n"
    kind = rng.random()
    if kind < 0.40:
        return cot + f"Therefore the final answer is $\\boxed{{{gold}}}$."
    if kind < 0.58:
        return cot + f"So the answer is $\\boxed{{{gold + rng.randint(1, 50)}}}$."
    if kind < 0.72:
        return cot + f"Answer: {gold if rng.random() < 0.6 else gold - 1}"
    if kind < 0.78:
        return cot + f"The ratio is $\\frac{{{2 * gold}}}{{2}}$, so \\boxed{{\\frac{{{4 * gold}}}{{4}}}}"
    if kind < 0.83:
        unit = rng.choice([r"^\circ", r"\text{ cm}^2", r"\%", r"\text{ ways}"])
        return cot + f"Hence \\boxed{{{gold}{unit}}}."
    if kind < 0.86:
        return cot + f"First \\boxed{{{gold + 7}}} was wrong; actually \\boxed{{{gold}}}"
    if kind < 0.88:
        return cot + f"\\boxed{{{gold / 4:.2f}}} which as a fraction is \\boxed{{{gold}/4}}"
    return cot + "I am still checking the case where"  # truncated: no final answer


def build_pairs(seed: int = 0, pathological: int = 2) -> list[tuple[str, str]]:
    """3,680 (response, gold) pairs; ``pathological`` of them replaced by a runaway answer."""
    rng = random.Random(seed)
    pairs = []
    for bench, size in BENCH_SIZES.items():
        for _ in range(size):
            gold = rng.randint(0, 999) if bench != "beyondaime" else rng.randint(3, 33_124_147)
            for sample in range(SAMPLES):
                pairs.append((_response(rng, gold, sample), str(gold)))
    for index in rng.sample(range(len(pairs)), pathological):
        pairs[index] = (f"{pairs[index][0][:2000]} so \\boxed{{9^{{9^{{9}}}}}}", pairs[index][1])
    return pairs


def timed(pairs: list[tuple[str, str]], workers: int, timeout: float) -> tuple[float, float, list]:
    """(seconds for grade_many end to end, seconds on an already started pool, verdicts)."""
    started = time.perf_counter()
    verdicts = grade_many(pairs, workers=workers, timeout=timeout)
    cold = time.perf_counter() - started
    with GradingPool(workers=workers, timeout=timeout) as pool:
        pool.start()
        started = time.perf_counter()
        warm_verdicts = pool.grade(pairs)
        warm = time.perf_counter() - started
    assert warm_verdicts == verdicts, "verdicts differ between runs"
    return cold, warm, verdicts


CASES = Path(__file__).resolve().parent.parent / "tests" / "grading" / "cases.jsonl"


def case_agreement(table: Path = CASES) -> float:
    """Print how often the grader gives the verdict each row of the case table expects; return the share
    of independent rows (not policy decisions) on which it agrees with the cited suite."""
    rows = [json.loads(line) for line in table.read_text(encoding="utf-8").splitlines() if line]
    agrees = [grade(row["response"], row["gold"]).correct is row["expected"] for row in rows]
    independent = [agree for agree, row in zip(agrees, rows, strict=True) if "policy" not in row]
    share = sum(independent) / len(independent)
    print(
        f"case table: {len(rows)} rows, {len(rows) - len(independent)} of them policy decisions or own cases"
    )
    count = f"{sum(independent)} of {len(independent)}"
    print(f"agreement with the cited suites on the independent rows: {count} ({share:.1%})")
    print(f"every row as the table expects: {sum(agrees)}/{len(rows)} ({sum(agrees) / len(rows):.1%})")
    classes = sorted({row["class"] for row in rows if "class" in row})
    for name in classes:
        of_class = [agree for agree, row in zip(agrees, rows, strict=True) if row.get("class") == name]
        print(f"  {name}: {sum(of_class)}/{len(of_class)}")
    for agree, row in zip(agrees, rows, strict=True):
        if not agree:
            print(f"  disagrees: {row['source']}: {row['response'][-60:]!r} vs gold {row['gold'][-40:]!r}")
    return share


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pathological", type=int, default=2, help="runaway answers among the responses")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="per-response deadline (s)")
    parser.add_argument("--cases", action="store_true", help="print agreement with the case table instead")
    args = parser.parse_args()
    if args.cases:
        case_agreement()
        return

    pairs = build_pairs(pathological=args.pathological)
    size = sum(len(r) for r, _ in pairs) / len(pairs)
    print(f"{len(pairs):,} responses (mean {size / 1000:.1f} KB), {args.pathological} pathological")
    one_cold, one_warm, verdicts = timed(pairs, 1, args.timeout)
    two_cold, two_warm, verdicts_two = timed(pairs, 2, args.timeout)
    assert verdicts_two == verdicts, "1 and 2 workers disagree"

    reasons = Counter(v.reason for v in verdicts)
    print("verdicts: " + ", ".join(f"{reason} {count}" for reason, count in reasons.most_common()))
    n = len(pairs)
    print(f"{'':28}{'1 worker':>18}{'2 workers':>19}{'speed-up':>10}")
    for label, one, two in (
        ("grade_many (with start-up)", one_cold, two_cold),
        ("started pool (grading only)", one_warm, two_warm),
    ):
        columns = f"{one:>6.2f}s{n / one:>7.0f} resp/s{two:>7.2f}s{n / two:>7.0f} resp/s{one / two:>9.2f}x"
        print(f"{label:28}{columns}")
    meets_time = "meets" if two_cold <= TARGET_SECONDS else "MISSES"
    meets_speedup = "meets" if one_cold / two_cold >= TARGET_SPEEDUP else "MISSES"
    print(
        f"target ≤ {TARGET_SECONDS:.0f} s with 2 workers: {meets_time}; "
        f"speed-up ≥ {TARGET_SPEEDUP}x (grade_many): {meets_speedup}"
    )


if __name__ == "__main__":
    main()
