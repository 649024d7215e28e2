"""The diagnostics every method logs: clip fractions with constant bounds, the rollout before filtering."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from openrlhf_fixtures import method_settings, openrlhf_args

from infoppo_cli.infotime import clip_statistics
from infoppo_cli.openrlhf_adapter.policy_loss import install_info_loss
from infoppo_cli.openrlhf_adapter.step_metrics import RolloutRecorder


def _batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(2, 6, generator=g)
    new = old + torch.randn(2, 6, generator=g) * 0.5
    mask = torch.arange(6)[None, :] < torch.tensor([[6], [3]])
    return new, old, torch.randn(2, 6, generator=g), mask


def test_constant_bounds_give_the_clip_fractions_of_the_core_function():
    from openrlhf.models.loss import PolicyLoss

    trainer = SimpleNamespace(
        args=openrlhf_args("--actor.eps_clip_low_high", "0.2", "0.28"),
        actor_loss_fn=PolicyLoss(clip_eps_low=0.2, clip_eps_high=0.28),
        actor=torch.nn.Identity(),
        training_step=lambda experience, *a, **k: trainer.actor_loss_fn(
            *experience.batch, action_mask=experience.mask
        ),
    )
    loss = install_info_loss(trainer, method_settings("ppo"))
    assert trainer.actor_loss_fn is loss and loss.experience is None and loss.fixed_eps == (0.2, 0.28)
    new, old, adv, mask = _batch()
    experience = SimpleNamespace(
        batch=(new, old, adv), mask=mask, info={"clip_frac_upper": torch.tensor(9.0)}
    )
    trainer.training_step(experience)
    expected = clip_statistics(
        (new - old).exp(), adv, torch.full_like(new, 0.8), torch.full_like(new, 1.28), mask
    )
    for key, value in expected.items():  # the stale value of an earlier epoch is replaced
        assert float(experience.info[key]) == pytest.approx(float(value)) and experience.info[key].dim() == 0
    assert loss.experience is None


def test_recorder_sees_every_graded_response_of_a_training_generation():
    responses = [
        {"reward": torch.tensor([r]), "extra_logs": {"grade_timeout": torch.tensor([t])}}
        for r, t in [(1.0, 0.0), (0.0, 0.0), (0.0, 1.0), (0.0, 0.0)]
    ]
    generator = SimpleNamespace(_process_response_into_experience=lambda response, **kw: response)

    def generate_vllm(**kwargs):  # two groups of two: the all-wrong one is filtered out
        kept = [generator._process_response_into_experience(r) for r in responses][:2]
        return kept, 2, False

    generator._generate_vllm = generate_vllm
    recorder = RolloutRecorder(generator, samples_per_prompt=2)
    recorder.draw(lambda **kw: generator._generate_vllm())
    assert recorder.take() == {
        "rollout/reward_mean_unfiltered": 0.25,
        "rollout/grade_timeout_frac": 0.25,
        "rollout/kept_group_frac": 0.5,
        "responses_generated": 4.0,  # the filtered-out group's responses too
    }
    assert recorder.take() == {}
    generator._generate_vllm()  # an evaluation: not a training generation
    assert recorder.take() == {}


def test_responses_of_a_generation_that_trained_nothing_count_towards_the_next_step():
    """A generation left short at the end of a pass trains no step of its own (``full_batches``):
    its responses are counted with the step that completes its batch."""
    generator = SimpleNamespace(_process_response_into_experience=lambda response, **kw: response)
    response = {"reward": torch.tensor([1.0]), "extra_logs": {}}

    def generate_vllm(**kwargs):
        return [generator._process_response_into_experience(response) for _ in range(2)], 1, False

    generator._generate_vllm = generate_vllm
    recorder = RolloutRecorder(generator, samples_per_prompt=2)
    recorder.draw(lambda **kw: generator._generate_vllm())  # short: no step takes it
    recorder.draw(lambda **kw: generator._generate_vllm())
    assert recorder.take()["responses_generated"] == 4.0
