"""The component registry: every entry resolvable, its maths the pure functions', no torch on import."""

from __future__ import annotations

import subprocess
import sys
from functools import cached_property
from types import SimpleNamespace

import pytest
import torch
from densities import information_density

from infoppo_cli import components, infotime
from infoppo_cli.components import CLIPS, KINDS, NORMS, TOKEN_MASKS, RhoInputs, component
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.settings import Components
from infoppo_cli.train.methods import methods


def test_reading_the_registry_imports_no_torch():
    code = "import sys, infoppo_cli.components as c; c.KINDS, c.NORMS; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _registered_maths():
    for entries in (*KINDS.values(), NORMS):
        for entry in entries.values():
            for field in ("gae_with_rho", "bounds", "keep", "function"):
                function = getattr(entry, field, None)
                if function is not None:
                    yield entry.name, function.__name__


@pytest.mark.parametrize(("entry", "function"), list(_registered_maths()))
def test_every_registered_function_is_one_of_infotime_s(entry, function):
    assert callable(getattr(infotime, function)), f"{entry} names infotime.{function}"


def test_the_registry_calls_the_maths_it_names():
    rho = torch.rand(3, 7)
    ours, theirs = CLIPS["adaptive"].bounds(rho, 10.0, 20.0), infotime.adaptive_clip_bounds(rho, 10.0, 20.0)
    assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1])
    entropy, mask = torch.rand(2, 9) * 5, (torch.rand(2, 9) > 0.2).float()
    assert torch.equal(
        TOKEN_MASKS["top_entropy"].keep(entropy, mask, 0.3), infotime.high_entropy_mask(entropy, mask, 0.3)
    )


@pytest.mark.parametrize(
    ("norm", "expected"),
    [
        ("global", lambda h, m: infotime.density_by_vocabulary(h, m, 50)),
        ("batch", lambda h, m: infotime.density_by_batch(h, m, 7.0)),
        ("sentence", infotime.density_by_response),
    ],
)
def test_each_normalisation_takes_what_it_divides_by(norm, expected):
    entropy, mask = torch.rand(3, 6) * 4, (torch.rand(3, 6) > 0.3).float()
    got = information_density(entropy, mask, norm, vocab_size=50, max_entropy=7.0)
    assert torch.equal(got, expected(entropy, mask))


@pytest.mark.parametrize("norm", list(NORMS))
def test_every_normalisation_takes_only_what_a_batch_offers(norm):
    offered = {name for name, value in vars(RhoInputs).items() if isinstance(value, cached_property)}
    assert set(NORMS[norm].inputs) <= offered


def test_a_batch_computes_an_input_only_when_a_normalisation_asks_for_it():
    reads = []
    entropies = [torch.tensor([[1.0, 9.0]]), torch.tensor([[4.0, 2.0]])]
    masks = [torch.tensor([[1.0, 0.0]]), torch.ones(1, 2)]
    batch = RhoInputs(entropies, masks, lambda: reads.append(1) or SimpleNamespace(vocab_size=100))
    sentence, by_batch = NORMS["sentence"].densities(batch), NORMS["batch"].densities(batch)
    assert reads == [] and batch.batch_max_entropy == 4.0  # the masked-out 9.0 does not count
    assert [r.tolist() for r in by_batch] == [[[0.25, 0.0]], [[1.0, 0.5]]]
    assert [r.tolist() for r in sentence] == [[[1.0, 0.0]], [[1.0, 0.5]]]
    NORMS["global"].densities(batch)
    NORMS["global"].densities(batch)
    assert reads == [1]


def test_an_unknown_name_or_kind_lists_the_choices():
    with pytest.raises(ValueError, match="unknown clip 'wide'; choose one of fixed, adaptive"):
        component("clip", "wide")
    with pytest.raises(ValueError, match="unknown norm 'token'; choose one of global, batch, sentence"):
        components.rho_normalisation("token")
    with pytest.raises(ValueError, match="no component kind 'loss'"):
        component("loss", "fixed")


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_methods_file_offers_exactly_the_registered_components(kind, tmp_path):
    """The methods file's choices are the registry's: an entry added here is accepted there, and a name
    it does not hold is refused with the registered ones listed."""
    path = tmp_path / "mine.toml"
    path.write_text(f'[m]\nsummary = "x"\nextends = "ppo"\n{kind} = "unregistered"\n', encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        methods(str(path))
    message = str(caught.value)
    assert f"{kind} must be" in message and "'unregistered'" in message
    assert all(name in message for name in KINDS[kind])


def test_what_a_method_needs_follows_from_its_entries():
    info = Components("info_time_gae", "fixed", "all", "binary", "openrlhf")
    assert info.uses_critic and info.uses_rho and info.needed_settings() == ("norm",)
    grpo_ft = Components("group_norm", "fixed", "top_entropy", "signed", "verl")
    assert not grpo_ft.uses_critic and not grpo_ft.uses_rho and grpo_ft.loss_tokens.by_entropy
    assert grpo_ft.needed_settings() == ("top_entropy_frac",)
    assert grpo_ft.reward_values == (1.0, -1.0) and grpo_ft.adam_betas == (0.9, 0.999)
    clip_only = Components("gae", "adaptive", "all", "binary", "openrlhf")
    assert clip_only.needed_settings() == ("eps_low_info", "eps_high_info", "norm")
