"""The clock per token is the trainer's maths from infotime, with the infoppo method's settings."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from densities import information_density
from hypothesis import given, settings
from hypothesis import strategies as st

from infoppo_cli import infotime
from infoppo_cli.components import NORMS
from infoppo_cli.errors import UsageError
from infoppo_cli.inspect.clock import clock, discount_text, file_inputs
from infoppo_cli.inspect.settings import ClockSettings, InspectSettings, method_clock
from infoppo_cli.train.methods import method

MODEL = SimpleNamespace(vocab_size=1000)
"""A model config as a rho normalisation reads it."""

entropies = st.lists(st.floats(0.0, 12.0), min_size=1, max_size=60).map(lambda xs: torch.tensor(xs))


@settings(max_examples=60, deadline=None)
@given(h=entropies, gamma=st.floats(0.5, 1.0), norm=st.sampled_from(list(NORMS)))
def test_gamma_info_is_the_info_discount_of_each_prefix(h, gamma, norm):
    c = clock(h, method_clock(norm=norm, gamma=gamma), file_inputs([h, torch.tensor([12.0])], MODEL))
    ones = torch.ones(1, len(h))
    for t in range(len(h)):
        prefix = torch.zeros(1, len(h))
        prefix[0, :t] = 1
        assert math.isclose(
            float(c.gamma_info[t]), float(infotime.info_discount(c.rho[None], prefix, gamma)), rel_tol=1e-5
        )
    assert math.isclose(c.discount, float(infotime.info_discount(c.rho[None], ones, gamma)), rel_tol=1e-6)
    assert float(c.gamma_info[0]) == 1.0
    assert torch.all(c.gamma_info[1:] <= c.gamma_info[:-1])


@settings(max_examples=40, deadline=None)
@given(h=entropies, eps_low=st.floats(0.0, 30.0), eps_high=st.floats(0.0, 30.0))
def test_rho_and_clip_bounds_are_infotime_s(h, eps_low, eps_high):
    c = clock(
        h, ClockSettings("batch", 0.999, eps_low, eps_high), file_inputs([h, torch.tensor([13.0])], MODEL)
    )
    want_rho = information_density(h[None], torch.ones(1, len(h)), "batch", max_entropy=13.0)[0]
    torch.testing.assert_close(c.rho, want_rho)
    low, high = infotime.adaptive_clip_bounds(want_rho, eps_low, eps_high)
    torch.testing.assert_close(c.clip_low, low)
    torch.testing.assert_close(c.clip_high, high)


def test_batch_norm_divides_by_the_largest_entropy_of_the_file():
    values = [torch.tensor([1.0, 2.0]), torch.tensor([4.0, 0.5])]
    file = file_inputs(values, MODEL)
    assert file.batch_max_entropy == 4.0
    assert clock(values[0], method_clock(norm="batch"), file).rho.tolist() == [0.25, 0.5]
    assert clock(values[0], method_clock(norm="sentence"), file).rho.tolist() == [0.5, 1.0]
    assert clock(values[0], method_clock(norm="global"), file).rho[1].item() == pytest.approx(
        2 / math.log(1000)
    )


def test_an_empty_response_has_an_empty_clock():
    c = clock(torch.zeros(0), method_clock(), file_inputs([torch.tensor([1.0])], MODEL))
    assert len(c.rho) == 0 and c.discount == 1.0


def test_defaults_are_the_infoppo_method_s():
    chosen = method("infoppo")
    paper = ClockSettings(
        gamma=chosen.openrlhf["algo.advantage.gamma"],
        eps_low_info=chosen.infotime["eps_low_info"],
        eps_high_info=chosen.infotime["eps_high_info"],
        norm=chosen.infotime["norm"],
    )
    assert method_clock() == paper
    assert InspectSettings("model", "responses.jsonl").clock == paper  # no clock given: the method's
    assert method_clock(gamma=0.5) == ClockSettings(paper.norm, 0.5, paper.eps_low_info, paper.eps_high_info)


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"norm": "file"}, "--norm"),
        ({"gamma": 1.5}, "--gamma"),
        ({"eps_low_info": -1.0}, "^--eps-low-info must be a finite number >= 0, got -1.0$"),
    ],
)
def test_bad_settings_are_usage_errors(bad, message):
    with pytest.raises(UsageError, match=message):
        method_clock(**bad)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.5"),
        (0.4491, "0.449"),
        (0.9763, "0.976"),
        (0.99987, "0.99987"),
        (0.9999991, "0.9999991"),
        (0.999, "0.999"),
        (1.0, "1"),
        (3.2e-4, "0.00032"),
        (None, "-"),
    ],
)
def test_gamma_is_printed_with_enough_digits_to_differ_from_one(value, text):
    assert discount_text(value) == text


@given(st.floats(min_value=1e-12, max_value=1.0, exclude_max=True))
def test_a_discount_below_one_never_reads_as_one(value):
    text = discount_text(value)
    shown = float(text)
    assert shown < 1.0 and text != "1"
    assert abs(shown - value) <= 0.06 * (1.0 - value) or abs(shown - value) <= 0.006 * value
