"""In-training evaluation: benchmark problems in the training prompt format, for OpenRLHF's own eval.

InfoPPO's main figures plot AIME24/AIME25 accuracy over training steps. OpenRLHF evaluates in
training from ``--eval.dataset`` every ``--eval.steps`` steps with ``--eval.n_samples_per_prompt``
samples at ``--eval.temperature``, scoring each sample with the training reward (infoppo's grader)
and logging ``eval_<datasource>_pass1``: the mean reward over a problem's k samples, averaged over
problems, i.e. Mean@k. infoppo writes that dataset (``eval-prompts.jsonl`` in the run directory,
one row per problem: ``prompt`` rendered with the training data's template, ``label``, and
``datasource`` = the benchmark's name) and logs ``eval_<bench>`` = Mean@k in percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import atomic_write_text
from infoppo_cli.data.templates import BOXED_PREFIX, DAPO_PREFIX, render_prompt
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.benchmarks import load_bench
from infoppo_cli.eval.registry import load_registry, parse_selection
from infoppo_cli.records import iter_jsonl
from infoppo_cli.records.text import dumps
from infoppo_cli.rundir import RunDir

DEFAULT_BENCHES = ("aime24", "aime25")
"""InfoPPO's main figures: AIME24 and AIME25 accuracy over training steps."""
DEFAULT_EVERY = 5
"""Every 5 RL steps, as the 80/20 authors' and verl's DAPO scripts evaluate (``trainer.test_freq=5``)."""
DEFAULT_SAMPLES = 16
"""k of Mean@k, as ``infoppo eval``'s default (``--samples 16``)."""
TEMPERATURE = 1.0
"""InfoPPO's evaluation protocol: temperature 1.0, as it samples in training."""


@dataclass(frozen=True)
class EvalPlan:
    """Which benchmarks (name -> local file or ``None`` for the Hub), how often, how many samples, and
    the user's registry file that defines some of them (``--benches-file``)."""

    benches: dict[str, str | None]
    every: int
    samples: int
    benches_file: str | None = None
    before: bool = True
    """Also evaluate the base model, before the first update (step 0)."""

    def flags(self, output_dir: Path) -> dict[str, Any]:
        """OpenRLHF's ``--eval.*`` flags (none when no benchmark is chosen)."""
        if not self.benches:
            return {}
        return {
            "eval.dataset": str(RunDir(output_dir).eval_prompts),
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


def eval_plan(
    selection: str | None, every: int | None, samples: int | None, *, benches_file: str | None = None
) -> EvalPlan:
    """``--eval-bench`` (registry names, ``NAME=FILE`` for a local file, ``all``; ``none`` to switch it
    off; the syntax of ``eval --bench``), ``--eval-every``, ``--eval-samples`` and ``--benches-file`` (a
    TOML file of more benchmarks, checked even when evaluation is off), with the defaults above; bad
    values are a :class:`UsageError`."""
    for name, value in (("--eval-every", every), ("--eval-samples", samples)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be >= 1, got {value}")
    if benches_file is not None:
        load_registry(benches_file)  # a broken file is refused even when no benchmark uses it
        benches_file = str(Path(benches_file).expanduser().resolve())
    text = ",".join(DEFAULT_BENCHES) if selection is None else selection.strip()
    benches: dict[str, str | None] = {}
    if text:  # "none" (and "off") parse to no benchmark, as for every benchmark option
        benches = parse_selection(text, benches_file, option="--eval-bench")
    return EvalPlan(benches, every or DEFAULT_EVERY, samples or DEFAULT_SAMPLES, benches_file)


def training_template(data: str) -> str:
    """The template of the training prompts (``dapo``, ``boxed`` or ``raw``), read from the first row
    of a local JSONL or parquet file (read as every JSONL input is: ``records.jsonl``); a Hub dataset
    is ``dapo`` (``infoppo data prep``'s default). A first row that is not a JSON object with a text
    ``prompt`` is an error naming the file, never a silent guess."""
    path = Path(data)
    if not path.is_file() or path.suffix not in (".jsonl", ".parquet"):
        return "dapo"
    prompt = _first_prompt(path)
    if not isinstance(prompt, str):
        raise UsageError(
            f"{path}: its first row has no text 'prompt' to tell the template from (dapo, boxed, raw)"
        )
    if prompt.startswith(DAPO_PREFIX):
        return "dapo"
    return "boxed" if prompt.startswith(BOXED_PREFIX) else "raw"


def _first_prompt(path: Path) -> Any:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # lazy: heavy, kept off start-up

        try:
            table = pq.read_table(path, columns=["prompt"])
        except Exception:  # no such column, or not parquet: no prompt to read
            return None
        return table.column("prompt")[0].as_py() if table.num_rows else None

    first = next(iter_jsonl(path), None)
    return None if first is None or first.record is None else first.record.get("prompt")


def load_eval_problems(plan: EvalPlan) -> dict[str, list[Any]]:
    """Every benchmark of ``plan`` loaded now (a local file, the Hub's cache, or a ``--benches-file``
    entry), so that one that cannot load is refused before the run, not hours in (the hint names
    ``--eval-bench``, which train and sweep share)."""
    problems = {}
    for name, file in plan.benches.items():
        try:
            problems[name] = load_bench(name, file, plan.benches_file)
        except UsageError as exc:
            hint = f"for in-training eval pass --eval-bench {name}=FILE, or --eval-bench none"
            raise UsageError(f"{exc}; {hint}") from None
    return problems


def write_eval_prompts(
    plan: EvalPlan, output_dir: Path, template: str, problems: dict[str, list[Any]] | None = None
) -> Path | None:
    """Write ``output_dir/eval-prompts.jsonl`` (atomically) for ``plan``; ``None`` when it is off.
    ``problems`` are the benchmarks already loaded by :func:`load_eval_problems` (loaded here if not)."""
    if not plan.benches:
        return None
    lines = []
    for name, bench in (load_eval_problems(plan) if problems is None else problems).items():
        for problem in bench:
            row = {
                "prompt": render_prompt(problem.problem, template),
                "label": problem.answer,
                "datasource": name,
            }
            lines.append(dumps(row, ensure_ascii=False) + "\n")
    path = RunDir(output_dir).eval_prompts
    atomic_write_text(path, "".join(lines))
    return path
