"""Benchmark `infoppo data prep dapo-math-17k` on a synthetic file shaped like the real one.

The real `BytedTsinghua-SIA/DAPO-Math-17k` parquet holds 1,791,700 rows: 17,917 `extra_info.index`
values repeated 100 times, 17,398 distinct prompts (some problems sit under two indices, a few with
different answers), ~19% of them Chinese, in verl's schema. This script builds the same shape with
random text, runs the real CLI on it in a child process, and prints rows/s and the child's peak RSS
against the targets (60 s and 3 GB for the full file on a 2-core machine).

    .venv/bin/python benchmarks/bench_data.py                 # full size, 1,791,700 rows
    .venv/bin/python benchmarks/bench_data.py --rows 200000   # quicker
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPEATS = 100
FULL_ROWS = 1_791_700
INDEX_TO_PROMPT_RATIO = 17_398 / 17_917  # distinct prompts per distinct index in the real file
ZH_SHARE = 3_282 / 17_398
TARGET_SECONDS, TARGET_RSS_GB = 60.0, 3.0

_WORDS = (  # noqa: SIM905 - a word list is easier to read as text
    "let triangle circle integer positive real number find the sum of all such that prime divisor "
    "sequence polynomial roots probability expected value area perimeter remainder when divided by "
    "how many ordered pairs satisfy equation function maximum minimum value digits base"
).split()
_LATEX = (
    r"$x^2+y^2=25$",
    r"$\frac{m}{n}$",
    r"$\sqrt{3}$",
    r"$a_{n+1}=2a_n+1$",
    r"$\binom{10}{3}$",
    r"$2^{2024}$",
)


def _problem(rng: random.Random, chinese: bool) -> str:
    if chinese:
        body = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(60, 160)))
        return f"{body}，求 {rng.choice(_LATEX)} 的值。"
    words = [rng.choice(_WORDS) for _ in range(rng.randint(60, 140))]
    for _ in range(rng.randint(1, 4)):
        words.insert(rng.randrange(len(words)), rng.choice(_LATEX))
    return " ".join(words).capitalize() + "?"


def build_synthetic_parquet(path: Path, rows: int = FULL_ROWS, seed: int = 0) -> dict[str, int]:
    """Write a DAPO-shaped parquet of ``rows`` rows (index-major, ``REPEATS`` copies per index)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from infoppo_cli.data.templates import render_prompt

    rng = random.Random(seed)
    n_indices = max(1, rows // REPEATS)
    n_prompts = max(1, round(n_indices * INDEX_TO_PROMPT_RATIO))
    problems = [_problem(rng, rng.random() < ZH_SHARE) for _ in range(n_prompts)]
    answers = [str(rng.randint(-50, 100_000)) for _ in range(n_prompts)]
    # Indices beyond n_prompts reuse an earlier problem; one in ten of those with another answer.
    prompt_of_index = list(range(n_prompts)) + [
        rng.randrange(n_prompts) for _ in range(n_indices - n_prompts)
    ]
    unique = {
        "data_source": ["math_dapo"] * n_indices,
        "prompt": [
            [{"content": render_prompt(problems[p], "dapo"), "role": "user"}] for p in prompt_of_index
        ],
        "ability": ["MATH"] * n_indices,
        "reward_model": [
            {
                "ground_truth": answers[p] if i < n_prompts or rng.random() > 0.1 else str(rng.randint(0, 9)),
                "style": "rule-lighteval/MATH_v2",
            }
            for i, p in enumerate(prompt_of_index)
        ],
        "extra_info": [{"index": str(uuid.UUID(int=rng.getrandbits(128)))} for _ in range(n_indices)],
    }
    table = pa.table(unique)
    order = pa.array([min(i // REPEATS, n_indices - 1) for i in range(rows)])
    pq.write_table(table.take(order), path)
    return {"rows": rows, "indices": n_indices, "prompts": n_prompts}


# Run the CLI in a fresh interpreter that reports its own high-water RSS (VmHWM) as it exits. A child's
# getrusage figure would not do: it counts the pages shared with this (large) process at fork time.
_CHILD = """
import atexit, sys
def _report():
    with open("/proc/self/status") as status:
        hwm = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print("VmHWM_KB", hwm, file=sys.stderr)
atexit.register(_report)
sys.argv = ["infoppo", *sys.argv[1:]]
from infoppo_cli.cli import main
main()
"""


def run_prep(source: Path, out: Path) -> tuple[float, float, str]:
    """Run the real CLI in a child process; (wall seconds, child peak RSS in GB, its output)."""
    command = [sys.executable, "-c", _CHILD, "data", "prep", "dapo-math-17k"]
    command += ["--source", str(source), "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"prep failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    peak_kb = int(done.stderr.rsplit("VmHWM_KB", 1)[1].split()[0])
    return seconds, peak_kb / 1024**2, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=FULL_ROWS, help="rows in the synthetic file")
    parser.add_argument("--keep", type=Path, help="keep the synthetic parquet at this path")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        source = args.keep or Path(tmp) / "dapo-math-17k.parquet"
        started = time.perf_counter()
        shape = build_synthetic_parquet(source, args.rows)
        print(
            f"synthetic file: {shape['rows']:,} rows, {shape['indices']:,} indices, "
            f"{shape['prompts']:,} prompts, {source.stat().st_size / 1e6:.0f} MB, "
            f"built in {time.perf_counter() - started:.1f} s"
        )
        out = Path(tmp) / "out.jsonl"
        seconds, peak_gb, stdout = run_prep(source, out)
        written = sum(1 for _ in out.open(encoding="utf-8"))
        first = json.loads(out.open(encoding="utf-8").readline())

    scale = FULL_ROWS / args.rows
    print(stdout.rstrip())
    print(f"rows written: {written:,} (expected {shape['prompts']:,}); first row keys: {', '.join(first)}")
    print(f"prep wall time (child process, imports included): {seconds:.1f} s")
    print(f"throughput: {args.rows / seconds:,.0f} rows/s")
    print(f"peak RSS of the prep process: {peak_gb:.2f} GB")
    verdict_time = "meets" if seconds * scale <= TARGET_SECONDS else "MISSES"
    verdict_rss = "meets" if peak_gb <= TARGET_RSS_GB else "MISSES"
    note = "" if scale == 1 else f" (time scaled linearly ×{scale:.1f} to the full file)"
    print(
        f"target ≤ {TARGET_SECONDS:.0f} s for 1.79M rows: {verdict_time}{note}; "
        f"≤ {TARGET_RSS_GB:.0f} GB: {verdict_rss}"
    )


if __name__ == "__main__":
    main()
