"""One task, built from its recipe into a directory: problems, tokenizer, warm-started model, scores.

:class:`TaskRecipe` holds every choice that decides the files (the problem space and split, the
teacher, the model's shape, the supervised pass, the seeds) and, with the versions of the libraries
that train the model, hashes to the recipe id the cache is keyed by. :func:`build_task` writes::

    model/          a Hugging Face model directory (config, weights, tokenizer, chat template)
    train.jsonl     training prompts, in the layout of ``infoppo data prep dapo-math-17k``
    heldout.jsonl   held-out problems (id, problem, answer): a local benchmark file
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infoppo_cli.data.templates import DAPO_PREFIX, DAPO_SUFFIX
from infoppo_cli.resources import installed_version
from infoppo_cli.tasks.arithmetic import ArithmeticSpec, heldout_row, train_row, write_jsonl
from infoppo_cli.tasks.chain import ChainSpec, ChainTeacherSpec
from infoppo_cli.tasks.sampling import heldout_accuracy
from infoppo_cli.tasks.teacher import TeacherSpec
from infoppo_cli.tasks.tokenizer import train_tokenizer
from infoppo_cli.tasks.warm_start import (
    ModelSpec,
    WarmStartSpec,
    new_model,
    single_threaded,
    supervised_pass,
)

RECIPE_FORMAT = 1
"""Bumped whenever the code changes what a recipe builds, so that older caches are rebuilt."""
MODEL_DIR = "model"
TRAIN_FILE = "train.jsonl"
HELDOUT_FILE = "heldout.jsonl"
LIBRARIES = ("torch", "transformers", "tokenizers")
"""The packages whose versions can change the trained weights: part of the recipe id."""

Progress = Callable[[str, int, int], None]
"""``on_progress(stage, done, total)``: stages ``tokenizer``, ``warm start`` (one per optimiser step),
``measuring`` (held-out accuracy) and ``writing``; ``waiting`` (0, 0) first when another process is
building the same task and this one waits for it."""


@dataclass(frozen=True)
class TaskRecipe:
    """Everything that decides a task's files; equal recipes build equivalent tasks."""

    name: str = "arithmetic"
    problems: ArithmeticSpec | ChainSpec = field(default_factory=ArithmeticSpec)
    """The problem family: ``split()`` into training and held-out problems, ``source``,
    ``max_response_tokens`` (the budget the warm start is measured with), ``decisions`` (per problem)."""
    teacher: TeacherSpec | ChainTeacherSpec = field(default_factory=TeacherSpec)
    """The family's teacher: ``respond()``, ``corpus_text()``, ``expected_accuracy(decisions)``."""
    model: ModelSpec = field(default_factory=ModelSpec)
    warm_start: WarmStartSpec = field(default_factory=WarmStartSpec)
    measure_samples: int = 2
    """Samples per held-out problem when the built model's accuracy is measured (0: not measured)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": RECIPE_FORMAT,
            "name": self.name,
            "problems": self.problems.recipe(),
            "teacher": self.teacher.recipe(),
            "model": self.model.recipe(),
            "warm_start": self.warm_start.recipe(),
            "measure_samples": self.measure_samples,
            "versions": {name: installed_version(name) for name in LIBRARIES},
        }

    def recipe_id(self) -> str:
        """A short hash of :meth:`as_dict`: the cache directory's suffix."""
        text = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class BuildReport:
    """What a build measured: parameters, final loss and the warm start's held-out accuracy."""

    parameters: int
    final_loss: float
    expected_accuracy: float
    accuracy: dict[str, Any]
    seconds: float
    reference_tokens_mean: float = 0.0
    """The mean length in tokens of the teacher's correct responses to the held-out problems."""


def build_task(recipe: TaskRecipe, directory: Path, on_progress: Progress | None = None) -> BuildReport:
    """Build ``recipe`` into the existing empty ``directory`` (see the module docstring), on one CPU
    thread (see :func:`single_threaded`; one thread also makes the weights the same from build to build)."""
    with single_threaded():
        return _build(recipe, directory, on_progress or _no_progress)


def _build(recipe: TaskRecipe, directory: Path, progress: Progress) -> BuildReport:
    started = time.monotonic()
    train, heldout = recipe.problems.split()
    progress("tokenizer", 0, 1)
    tokenizer = _tokenizer([recipe.teacher.corpus_text(problem) for problem in train], recipe.model)
    progress("tokenizer", 1, 1)
    model = new_model(recipe.model, tokenizer)
    steps = recipe.warm_start.steps
    progress("warm start", 0, steps)
    loss = supervised_pass(
        model,
        tokenizer,
        train,
        recipe.teacher,
        recipe.warm_start,
        lambda step, _: progress("warm start", step, steps),
    )
    accuracy = _measure(model, tokenizer, heldout, recipe, progress)
    progress("writing", 0, 1)
    with _no_progress_bars():
        model.save_pretrained(directory / MODEL_DIR)
    tokenizer.save_pretrained(directory / MODEL_DIR)
    write_jsonl(directory / TRAIN_FILE, (train_row(problem, recipe.problems.source) for problem in train))
    write_jsonl(directory / HELDOUT_FILE, (heldout_row(problem) for problem in heldout))
    progress("writing", 1, 1)
    return BuildReport(
        parameters=sum(parameter.numel() for parameter in model.parameters()),
        final_loss=loss,
        expected_accuracy=recipe.teacher.expected_accuracy(recipe.problems.decisions),
        accuracy=accuracy,
        seconds=time.monotonic() - started,
        reference_tokens_mean=_reference_length(tokenizer, heldout, recipe),
    )


def _reference_length(tokenizer: Any, heldout: list[Any], recipe: TaskRecipe) -> float:
    """Mean tokens of a correct response (the end-of-turn token included), as the policy writes it."""
    texts = [recipe.teacher.respond(problem, random.Random(0), exact=True) for problem in heldout]
    lengths = [len(ids) + 1 for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    return sum(lengths) / len(lengths)


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Silence transformers' own tqdm bars (``Writing model shards``): progress is the caller's."""
    from transformers.utils import logging as hf_logging  # lazy: heavy, kept off planning

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _tokenizer(corpus: list[str], spec: ModelSpec) -> Any:
    return train_tokenizer(corpus, spec.vocab_size, (DAPO_PREFIX, DAPO_SUFFIX))


def _measure(
    model: Any, tokenizer: Any, heldout: list[Any], recipe: TaskRecipe, progress: Progress
) -> dict[str, Any]:
    """Held-out accuracy at temperature 1.0 and greedy, as recorded in the manifest."""
    if recipe.measure_samples < 1:
        return {}
    progress("measuring", 0, 2)
    budget = recipe.problems.max_response_tokens
    sampled = heldout_accuracy(
        model, tokenizer, heldout, 1.0, recipe.measure_samples, recipe.warm_start.seed, budget
    )
    progress("measuring", 1, 2)
    greedy = heldout_accuracy(model, tokenizer, heldout, 0.0, max_new_tokens=budget)
    progress("measuring", 2, 2)
    return {
        "temperature_1": round(sampled.accuracy, 4),
        "greedy": round(greedy.accuracy, 4),
        "responses": sampled.responses,
        "mean_response_tokens": round(sampled.mean_tokens, 2),
        "finished_share": round(sampled.finished_share, 4),
    }
