"""Sampling and held-out accuracy: responses cut at the end of turn, reproducible with a seed, and
graded by infoppo's grader (an oracle that always answers right scores 1, one that slips scores 0)."""

from __future__ import annotations

import re

import pytest
import torch
from tiny_task import TINY_MODEL, tokenizer_corpus

from infoppo_cli.data.templates import DAPO_PREFIX, DAPO_SUFFIX, render_prompt
from infoppo_cli.tasks.arithmetic import ArithmeticSpec, Problem, split_problems
from infoppo_cli.tasks.sampling import heldout_accuracy, sample
from infoppo_cli.tasks.tokenizer import TURN_END, train_tokenizer
from infoppo_cli.tasks.warm_start import new_model


@pytest.fixture(scope="module")
def task():
    train, heldout = split_problems(ArithmeticSpec(train_size=100, heldout_size=12))
    tokenizer = train_tokenizer(tokenizer_corpus(train), 300, (DAPO_PREFIX, DAPO_SUFFIX))
    return heldout, tokenizer


class Oracle:
    """Stands in for a model: answers each prompt's problem, off by ``slip``."""

    def __init__(self, tokenizer, slip=0):
        self.tokenizer, self.slip = tokenizer, slip

    def generate(self, input_ids, attention_mask, max_new_tokens, eos_token_id, pad_token_id, **_):
        rows = []
        for prompt in self.tokenizer.batch_decode(input_ids):
            a, op, b = re.search(r"What is (\d+) ([+-]) (\d+)\?", prompt).groups()
            reply = f"Answer: {Problem(int(a), op, int(b)).answer + self.slip}{TURN_END}"
            rows.append(self.tokenizer(reply, add_special_tokens=False)["input_ids"])
        width = max(map(len, rows))
        replies = torch.tensor([row + [pad_token_id] * (width - len(row)) for row in rows])
        return torch.cat([input_ids, replies], dim=1)


def test_an_oracle_scores_one_and_a_slipping_oracle_zero(task):
    heldout, tokenizer = task
    right = heldout_accuracy(Oracle(tokenizer), tokenizer, heldout, samples_per_problem=2)
    assert (right.accuracy, right.responses, right.finished_share) == (1.0, 24, 1.0)
    assert 6 <= right.mean_tokens <= 7
    assert heldout_accuracy(Oracle(tokenizer, slip=1), tokenizer, heldout).accuracy == 0.0


def test_responses_stop_at_the_end_of_turn_and_repeat_with_the_seed(task):
    heldout, tokenizer = task
    model = new_model(TINY_MODEL, tokenizer)
    prompts = [render_prompt(problem.text) for problem in heldout]
    first = sample(model, tokenizer, prompts, temperature=1.0, seed=3, max_new_tokens=8, batch_size=5)
    again = sample(model, tokenizer, prompts, temperature=1.0, seed=3, max_new_tokens=8, batch_size=5)
    assert first.texts == again.texts and len(first.texts) == len(prompts)
    for text, length, finished in zip(first.texts, first.lengths, first.finished, strict=True):
        assert 1 <= length <= 8
        assert finished == text.endswith(TURN_END)
        assert text.count(TURN_END) <= 1
    greedy = sample(model, tokenizer, prompts[:3], temperature=0.0, max_new_tokens=8)
    assert greedy.texts == sample(model, tokenizer, prompts[:3], temperature=0.0, max_new_tokens=8).texts
