"""Real OpenRLHF objects for the adapter tests: parsed arguments and rollout experiences."""

from __future__ import annotations

import os
from types import SimpleNamespace

import torch

from infoppo_cli.openrlhf_adapter.settings import InfoSettings


def method_settings(name: str = "infoppo", **changes) -> InfoSettings:
    """The settings `infoppo train` plans for the shipped method ``name`` (its components and
    ``[NAME.infotime]`` from presets/methods.toml), with ``changes``."""
    from infoppo_cli.train.methods import method

    chosen = method(name)
    return InfoSettings(**{"method": name, **chosen.components(), **chosen.infotime, **changes})


def openrlhf_args(*flags: str, settings: InfoSettings | None = None) -> SimpleNamespace:
    """OpenRLHF's own defaults for ``flags`` (its parser, then its ``hierarchize``), plus ``infotime``."""
    from openrlhf.utils.config import hierarchize

    from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser

    args = hierarchize(openrlhf_parser().parse_args(list(flags)))
    if args.actor.eps_clip_low_high is None:  # as the upstream command line does after parsing
        args.actor.eps_clip_low_high = (args.actor.eps_clip, args.actor.eps_clip)
    args.infotime = (settings or method_settings()).as_namespace()
    return args


def rollout_experiences(
    n_experiences: int = 3, batch: int = 2, width: int = 12, seed: int = 0, with_entropy: bool = True
) -> list:
    """Right-padded experiences as OpenRLHF's samples generator and actor/critic forwards leave them."""
    from openrlhf.trainer.ppo_utils.experience import Experience

    g = torch.Generator().manual_seed(seed)
    experiences = []
    for i in range(n_experiences):
        lengths = torch.randint(1, width + 1, (batch,), generator=g)
        mask = torch.arange(width)[None, :] < lengths[:, None]
        rewards = torch.randint(0, 2, (batch,), generator=g).float()
        exp = Experience(
            sequences=torch.randint(0, 100, (batch, width + 4), generator=g),
            attention_mask=(torch.arange(width + 4)[None, :] < lengths[:, None] + 4).long(),
            action_mask=mask,
            action_log_probs=-torch.rand(batch, width, generator=g) * mask,
            values=torch.randn(batch, width, generator=g) * mask,
            kl=torch.zeros(batch, width),
            rewards=rewards,
            scores=rewards.clone(),
            response_length=lengths.float(),
            truncated=torch.zeros(batch, dtype=torch.bool),
            total_length=lengths.float() + 4,
            index=[i * batch + j for j in range(batch)],
            prompts=[f"p{i}{j}" for j in range(batch)],
            labels=["1"] * batch,
            info={"reward": rewards.clone()},
        )
        if with_entropy:
            exp.old_entropy = torch.rand(batch, width, generator=g) * 3 * mask
        experiences.append(exp)
    return experiences


def stand_in_for_model_loading(actor_self):
    """Runs in the worker: upstream's init_model_from_pretrained needs CUDA and DeepSpeed, so only
    the part infoppo relies on (``self.trainer`` with a real PolicyLoss) is reproduced here."""
    from openrlhf.models.loss import PolicyLoss

    # Ray ships the actor class by value, its upstream base included: patch the base in this MRO
    upstream = next(cls for cls in type(actor_self).__mro__ if cls.__name__ == "PolicyModelActor")

    def load(self, strategy, *args, **kwargs):
        self.trainer = SimpleNamespace(
            args=strategy.args, actor_loss_fn=PolicyLoss(), training_step=lambda *a, **k: {}
        )

    upstream.init_model_from_pretrained = load
    return os.getpid()
