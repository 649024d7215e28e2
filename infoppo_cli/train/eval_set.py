"""In-training evaluation: benchmark problems in the training prompt format, for OpenRLHF's own eval.

The paper's main figures plot AIME24/AIME25 accuracy over training steps. OpenRLHF evaluates in
training from ``--eval.dataset`` every ``--eval.steps`` steps with ``--eval.n_samples_per_prompt``
samples at ``--eval.temperature``, scoring each sample with the training reward (infoppo's grader)
and logging ``eval_<datasource>_pass1``: the mean reward over a problem's k samples, averaged over
problems, i.e. Mean@k. infoppo writes that dataset (``eval-prompts.jsonl`` in the run directory,
one row per problem: ``prompt`` rendered with the training data's template, ``label``, and
``datasource`` = the benchmark's name) and logs ``eval_<bench>`` = Mean@k in percent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.data.templates import BOXED_PREFIX, DAPO_PREFIX, render_prompt
from infoppo_cli.errors import UsageError

EVAL_FILE = "eval-prompts.jsonl"
DEFAULT_BENCHES = ("aime24", "aime25")
"""The paper's main figures: AIME24 and AIME25 accuracy over training steps."""
DEFAULT_EVERY = 20
DEFAULT_SAMPLES = 16
"""k of Mean@k, as ``infoppo eval``'s default (``--samples 16``)."""
TEMPERATURE = 1.0
"""The paper evaluates at temperature 1.0, as it samples in training."""


@dataclass(frozen=True)
class EvalPlan:
    """Which benchmarks (name -> local file or ``None`` for the Hub), how often, how many samples."""

    benches: dict[str, str | None]
    every: int
    samples: int

    def flags(self, output_dir: Path) -> dict[str, Any]:
        """OpenRLHF's ``--eval.*`` flags (none when no benchmark is chosen)."""
        if not self.benches:
            return {}
        return {
            "eval.dataset": str(output_dir / EVAL_FILE),
            "eval.steps": self.every,
            "eval.n_samples_per_prompt": self.samples,
            "eval.temperature": TEMPERATURE,
        }

    def describe(self) -> str:
        """One line for the plan table."""
        if not self.benches:
            return "off"
        names = ", ".join(self.benches)
        return f"{names}: Mean@{self.samples} at T={TEMPERATURE} every {self.every} steps"


def eval_plan(selection: str | None, every: int | None, samples: int | None) -> EvalPlan:
    """``--eval-bench`` (``aime24,aime25``; ``NAME=FILE`` for a local copy; ``none`` to switch it
    off), ``--eval-every`` and ``--eval-samples``, with the defaults above; bad values are a
    :class:`UsageError`."""
    from infoppo_cli.eval.benchmarks import BENCH_NAMES

    for name, value in (("--eval-every", every), ("--eval-samples", samples)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be >= 1, got {value}")
    text = ",".join(DEFAULT_BENCHES) if selection is None else selection.strip()
    benches: dict[str, str | None] = {}
    if text.lower() not in ("", "none", "off"):
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, _, file = item.partition("=")
            name = name.strip().lower()
            if name not in BENCH_NAMES:
                raise UsageError(f"unknown --eval-bench {name!r}; choose from: {', '.join(BENCH_NAMES)}")
            if file and not Path(file).expanduser().is_file():
                raise UsageError(f"--eval-bench {name}={file}: no such file")
            benches[name] = str(Path(file).expanduser().resolve()) if file else None
    return EvalPlan(benches, every or DEFAULT_EVERY, samples or DEFAULT_SAMPLES)


def training_template(data: str) -> str:
    """The template of the training prompts (``dapo``, ``boxed`` or ``raw``), read from the first row
    of a local JSONL file; ``dapo`` (``infoppo data prep``'s default) otherwise."""
    path = Path(data)
    if path.suffix != ".jsonl" or not path.is_file():
        return "dapo"
    with path.open(encoding="utf-8") as handle:
        first = next((line for line in handle if line.strip()), "{}")
    try:
        prompt = str(json.loads(first).get("prompt", ""))
    except (ValueError, AttributeError):
        return "dapo"
    if prompt.startswith(DAPO_PREFIX):
        return "dapo"
    return "boxed" if prompt.startswith(BOXED_PREFIX) else "raw"


def write_eval_prompts(plan: EvalPlan, output_dir: Path, template: str) -> Path | None:
    """Write ``output_dir/eval-prompts.jsonl`` (atomically) for ``plan``; ``None`` when it is off."""
    from infoppo_cli.eval.benchmarks import load_bench

    if not plan.benches:
        return None
    lines = []
    for name, file in plan.benches.items():
        try:
            problems = load_bench(name, file)
        except UsageError as exc:
            hint = f"for in-training eval pass --eval-bench {name}=FILE, or --eval-bench none"
            raise UsageError(f"{exc}; {hint}") from None
        for problem in problems:
            row = {
                "prompt": render_prompt(problem.problem, template),
                "label": problem.answer,
                "datasource": name,
            }
            lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    path = output_dir / EVAL_FILE
    atomic_write_text(path, "".join(lines))
    return path
