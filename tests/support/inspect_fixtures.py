"""Helpers of the ``infoppo inspect`` tests: small response files for the tiny model."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = "Solve the following math problem step by Answer: answer is sum of all integers such that"


def response_rows(count: int = 10, seed: int = 0, max_words: int = 30) -> list[dict[str, object]]:
    """``count`` rows of prompt, response (8 to ``max_words`` words of maths text), id and grade."""
    rng = random.Random(seed)
    vocabulary = WORDS.split()
    rows = []
    for i in range(count):
        words = [rng.choice([*vocabulary, str(rng.randint(0, 99))]) for _ in range(rng.randint(8, max_words))]
        rows.append(
            {
                "id": f"q{i}",
                "prompt": f"What is {i} + {3 * i}?",
                "response": " ".join(words),
                "correct": i % 3 == 0,
            }
        )
    return rows


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
