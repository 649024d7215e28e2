"""Every RL step trains a full batch drawn from the current policy: a batch left short at the end of a
pass is completed from the next pass, and what a draw yields beyond one batch is dropped, not trained
one update stale at the next step."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from openrlhf_fixtures import method_settings, openrlhf_args

from infoppo_cli.openrlhf_adapter.full_batches import (
    DISCARDED_STALE_GROUPS,
    STALE_GROUPS_TRAINED,
    FullBatches,
)
from infoppo_cli.rundir import read_metrics
from infoppo_cli.train.length import passes_for


def _draws(draws):
    """A sample generator's ``generate_samples`` that returns ``draws`` in turn (samples, exhausted)."""
    queue = list(draws)

    def generate_samples(**kwargs):
        samples, exhausted = queue.pop(0)
        return samples, None, len(samples), exhausted

    return generate_samples


def test_a_short_batch_is_completed_from_the_next_pass_and_the_surplus_dropped():
    # batches of 4 responses; a pass over the data yields 4 + 2, the next pass 4 + 2 again
    draw = _draws([(list("abcd"), False), (list("ef"), True), (list("ghij"), False), (list("kl"), True)])
    full = FullBatches(draw, batch_responses=4, samples_per_prompt=1)
    got = [full() for _ in range(4)]
    trained = [samples for samples, *_ in got if samples]
    assert trained == [list("abcd"), list("efgh")]  # never a batch of 2, never "ij" a step late
    assert got[1] == ([], None, 2, True)  # upstream's loop ends the pass and starts the next one
    assert full.take() == {DISCARDED_STALE_GROUPS: 2.0}
    assert full.held == [(2, "k"), (2, "l")]  # short again: held, drawn after the second update
    assert full.take() == {DISCARDED_STALE_GROUPS: 0.0}  # counted once


def test_data_smaller_than_a_batch_still_trains():
    draw = _draws([(list("abc"), True)] * 4)
    full = FullBatches(draw, batch_responses=4, samples_per_prompt=1)
    got = [full()[0] for _ in range(4)]
    assert got == [[], list("abca"), [], list("abca")]
    assert full.take() == {DISCARDED_STALE_GROUPS: 4.0}


def test_groups_are_counted_in_prompts():
    draw = _draws([(list("aabb"), True), (list("ccddee"), False)])  # 2 responses a prompt
    full = FullBatches(draw, batch_responses=6, samples_per_prompt=2)
    assert [full()[0] for _ in range(2)] == [[], list("aabbcc")]
    assert full.take() == {DISCARDED_STALE_GROUPS: 2.0}


def test_keeping_the_stale_surplus_is_a_logged_choice():
    draw = _draws([(list("abcd"), False), (list("ef"), True), (list("ghij"), False), (list("kl"), True)])
    full = FullBatches(draw, batch_responses=4, samples_per_prompt=1, keep_stale_surplus=True)
    trained = [samples for samples, *_ in (full() for _ in range(4)) if samples]
    assert trained == [list("abcd"), list("efgh"), list("ijkl")]  # OpenRLHF-shaped reuse of "ij"
    assert full.take() == {DISCARDED_STALE_GROUPS: 0.0, STALE_GROUPS_TRAINED: 2.0}


# ---------------------------------------------------------------- upstream's own loop, pass after pass


@dataclass(frozen=True)
class _Drawn:
    prompt: int
    version: int
    """The policy updates made when this response was generated."""


class _Prompts:
    """A prompt dataloader of ``size`` prompts, one a batch (upstream collects them one by one)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.passes = 0

    def __iter__(self):
        self.passes += 1
        return iter([(None, [i], [str(i)], [None]) for i in range(self.size)])

    def __len__(self) -> int:
        return self.size

    def state_dict(self) -> dict:
        return {}


def _run(tmp_path, monkeypatch, *, prompts, batch, n, steps, episodes, keep_stale=False):
    """Upstream's ``fit`` and ``generate_samples`` in infoppo's trainer, the model's parts stood in
    for: the generator tags each response with the policy version that drew it, and each trained
    batch makes one update. Returns the trained batches as (drawn version, version when trained)."""
    from openrlhf.trainer.ppo_trainer import PPOTrainer
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator, _collect_prompt_batch

    from infoppo_cli.openrlhf_adapter.actors import InfoPPOTrainer
    from infoppo_cli.openrlhf_adapter.metrics_log import TrainMetricsLog
    from infoppo_cli.openrlhf_adapter.progress import TrainerProgress

    policy = SimpleNamespace(version=0)
    trained: list[list[tuple[int, int]]] = []

    def generate_vllm(dataloader_iter, num_prompts, dynamic_filtering, **kwargs):
        drawn, _, _, exhausted = _collect_prompt_batch(dataloader_iter, num_prompts)
        responses = [_Drawn(prompt, policy.version) for prompt in drawn for _ in range(n)]
        return responses, len(drawn), exhausted or not drawn

    def train_step(self, rollout_samples, global_step):
        trained.append([(sample.version, policy.version) for sample in rollout_samples])
        policy.version += 1
        return {}, global_step + 1

    monkeypatch.setattr(PPOTrainer.__ray_actor_class__, "train_step", train_step)
    flags = ("--rollout.batch_size", str(batch), "--rollout.n_samples_per_prompt", str(n))
    args = openrlhf_args(*flags, "--train.num_episodes", str(episodes))
    args.ckpt.save_steps = float("inf")
    trainer = object.__new__(InfoPPOTrainer.__ray_actor_class__)
    trainer.args, trainer.generate_kwargs = args, {}
    trainer.settings = method_settings("ppo", rl_steps=steps, keep_stale_surplus=keep_stale)
    trainer.prompts_dataloader, trainer.eval_dataloader = _Prompts(prompts), None
    trainer.wandb_logger = trainer.tensorboard_logger = None
    trainer.metrics_log = TrainMetricsLog(tmp_path / "metrics.jsonl", (1.0, 0.0))
    trainer.progress = TrainerProgress(say=lambda event: None)
    generator = object.__new__(SamplesGenerator)
    generator.args, generator.prompts_dataloader, generator.vllm_engines = (
        args,
        trainer.prompts_dataloader,
        [],
    )
    generator._generate_vllm = generate_vllm
    generator._process_response_into_experience = lambda response, **kwargs: response
    trainer.samples_generator = generator
    trainer._wrap_sample_generator()
    trainer.fit()
    return trained, read_metrics(tmp_path / "metrics.jsonl")


@pytest.mark.parametrize(
    ("prompts", "batch", "dropped"),
    [
        (10, 4, [0, 0, 2, 0, 2, 0]),  # each pass ends short by 2 prompts: the next pass's first draw
        (5, 2, [0, 0, 1, 0, 1, 0, 1]),  # completes the batch, its 2 (1) left over are dropped
        (9, 3, [0, 0, 0, 0]),  # passes of whole batches: nothing left over
        (3, 4, [2, 2, 2]),  # data smaller than a batch: two passes a batch
    ],
)
def test_every_trained_sample_was_drawn_by_the_current_policy(tmp_path, monkeypatch, prompts, batch, dropped):
    steps = len(dropped)
    episodes = passes_for(steps, batch, prompts)  # the plan's passes for these steps
    trained, records = _run(
        tmp_path, monkeypatch, prompts=prompts, batch=batch, n=2, steps=steps, episodes=episodes
    )
    assert len(trained) == steps and all(len(responses) == batch * 2 for responses in trained)
    stale = [sum(drawn != current for drawn, current in responses) for responses in trained]
    assert stale == [0] * steps  # responses per step drawn before the policy's last update
    assert [record["step"] for record in records] == list(range(1, steps + 1))
    assert [record[DISCARDED_STALE_GROUPS] for record in records] == dropped
    assert all(STALE_GROUPS_TRAINED not in record for record in records)


@pytest.mark.parametrize(("prompts", "batch", "steps"), [(10, 4, 6), (3, 4, 3)])
def test_one_pass_fewer_than_planned_falls_short_of_the_steps(tmp_path, monkeypatch, prompts, batch, steps):
    episodes = passes_for(steps, batch, prompts) - 1
    trained, _ = _run(
        tmp_path, monkeypatch, prompts=prompts, batch=batch, n=1, steps=steps, episodes=episodes
    )
    assert len(trained) < steps


def test_a_method_that_keeps_the_surplus_trains_it_stale_and_logs_it(tmp_path, monkeypatch):
    trained, records = _run(
        tmp_path, monkeypatch, prompts=10, batch=4, n=2, steps=6, episodes=3, keep_stale=True
    )
    stale = [sum(drawn != current for drawn, current in responses) // 2 for responses in trained]
    assert stale == [0, 0, 0, 2, 2, 0]  # step 3's surplus trained at step 4, step 4's at step 5
    assert [record[STALE_GROUPS_TRAINED] for record in records] == stale
    assert all(record[DISCARDED_STALE_GROUPS] == 0 for record in records)
