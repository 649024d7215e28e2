"""A task recipe small enough to build in about a second, for the cache's tests (in-process and in
child processes that are interrupted mid-build)."""

from __future__ import annotations

from infoppo_cli.tasks.arithmetic import ArithmeticSpec, Problem
from infoppo_cli.tasks.build import TaskRecipe
from infoppo_cli.tasks.teacher import TeacherSpec
from infoppo_cli.tasks.warm_start import ModelSpec, WarmStartSpec

TINY_MODEL = ModelSpec(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=1,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=16,
    vocab_size=300,
)
"""One layer of width 32: a forward pass in milliseconds (the model's vocabulary is the tokenizer's)."""


def tokenizer_corpus(problems: list[Problem]) -> list[str]:
    """The arithmetic task's tokenizer text: the chat roles, problems and both answer forms."""
    return [TeacherSpec().corpus_text(problem) for problem in problems]


def tiny_recipe(seed: int = 0, name: str = "tiny") -> TaskRecipe:
    """A one-layer model, three optimiser steps, forty training problems, no accuracy measurement."""
    return TaskRecipe(
        name=name,
        problems=ArithmeticSpec(first_max=20, train_size=40, heldout_size=10, seed=seed),
        model=TINY_MODEL,
        warm_start=WarmStartSpec(steps=3, clean_steps=2, batch_size=4, warmup_steps=1, decay_steps=1),
        measure_samples=0,
    )
