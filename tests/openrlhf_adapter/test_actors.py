"""infoppo's Ray actor subclasses run, and patch, inside real Ray worker processes (local Ray, CPU)."""

from __future__ import annotations

import os
from functools import partial
from types import SimpleNamespace

import pytest
import torch
from openrlhf_fixtures import method_settings, openrlhf_args, rollout_experiences, stand_in_for_model_loading

from infoppo_cli.rundir import read_metrics


@pytest.mark.slow
def test_policy_actor_patches_are_active_in_the_worker(local_ray):
    from infoppo_cli.openrlhf_adapter.actors import InfoPolicyModelActor

    actor = InfoPolicyModelActor.options(num_gpus=0, num_cpus=1).remote(1, 0, None, None)
    status = local_ray.get(actor.infoppo_status.remote())
    assert status["class"] == "InfoPolicyModelActor"
    assert status["experience_fields"] == ["old_entropy", "info_rho"]
    assert not status["chunked_entropy"] and not status["info_policy_loss"]

    worker_pid = local_ray.get(actor.__ray_call__.remote(stand_in_for_model_loading))
    strategy = SimpleNamespace(args=openrlhf_args(settings=method_settings("infoppo", entropy_chunk_size=64)))
    local_ray.get(actor.init_model_from_pretrained.remote(strategy, "unused-model-path"))
    status = local_ray.get(actor.infoppo_status.remote())
    assert status["chunked_entropy"] and status["info_policy_loss"]
    assert worker_pid != os.getpid()

    # the patches are process-local: this (driver) process is untouched
    import openrlhf.models.actor as actor_module

    assert not getattr(actor_module.compute_entropy, "_infoppo_chunked", False)
    local_ray.kill(actor)


@pytest.mark.slow
def test_experience_maker_splits_the_actors_tuple_results(local_ray):
    from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController

    from infoppo_cli.openrlhf_adapter.experience_maker import InfoExperienceMaker

    strategy = SimpleNamespace(args=openrlhf_args())
    maker = InfoExperienceMaker(
        None, None, None, None, FixedKLController(0.0), strategy, None, settings=method_settings()
    )
    pairs = [(torch.full((2, 3), -float(i)), torch.full((2, 3), float(i))) for i in range(3)]
    refs = [local_ray.put([pair]) for pair in pairs]
    log_probs = maker._flatten_results(refs, 1)
    assert [float(x[0, 0]) for x in log_probs] == [0.0, -1.0, -2.0]
    assert [float(h[0, 0]) for h in maker._pending_entropy] == [0.0, 1.0, 2.0]
    plain = maker._flatten_results([local_ray.put([torch.ones(2)])], 1)  # critic / reference results
    assert torch.equal(plain[0], torch.ones(2))


def _bare_trainer(tmp_path, method: str, eval_steps=float("inf")):
    """An InfoPPOTrainer instance without models: enough state for upstream's logging method."""
    from infoppo_cli.openrlhf_adapter.actors import InfoPPOTrainer
    from infoppo_cli.openrlhf_adapter.metrics_log import TrainMetricsLog
    from infoppo_cli.openrlhf_adapter.progress import TrainerProgress

    trainer = object.__new__(InfoPPOTrainer.__ray_actor_class__)
    trainer.args = openrlhf_args("--actor.eps_clip_low_high", "0.2", "0.28")
    trainer.args.ckpt.save_steps = float("inf")
    trainer.args.ckpt.path = str(tmp_path / "ckpt")
    trainer.args.eval.steps = eval_steps
    trainer.settings = method_settings(method)
    trainer.eval_dataloader = None
    trainer.wandb_logger = trainer.tensorboard_logger = None
    trainer.metrics_log = TrainMetricsLog(tmp_path / "metrics.jsonl", (1.0, 0.0))
    trainer.rollout_recorder = SimpleNamespace(take=dict)  # nothing generated in these tests
    trainer.full_batches = SimpleNamespace(take=dict)
    trainer.full_batches = SimpleNamespace(take=dict)
    trainer.steps_done, trainer.evaluated_step = 0, None
    trainer.told = []  # the progress events `infoppo train` would show
    trainer.progress = TrainerProgress(say=trainer.told.append)
    return trainer


@pytest.mark.parametrize("method", ["infoppo", "ppo"])
def test_trainer_writes_one_metrics_line_per_step(tmp_path, method):
    trainer = _bare_trainer(tmp_path, method)
    status = {"rollout/reward_mean": 0.25, "policy_loss": torch.tensor(0.5), "critic_loss": 1.5, "kl": 0.0}
    if method == "infoppo":
        status.update(rho_mean=0.4, entropy_mean=1.2, clip_upper_mean=3.0, clip_lower_mean=0.4)
    for step in (1, 2):
        trainer.save_logs_and_checkpoints(step, dict(status), {})
    records = read_metrics(tmp_path / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2]
    assert records[0]["reward_mean"] == 0.25 and records[0]["policy_loss"] == 0.5
    if method == "infoppo":
        assert records[0]["rho_mean"] == 0.4 and records[0]["clip_upper_mean"] == 3.0
    else:  # constant PPO bounds fill the same columns
        assert records[0]["clip_lower_mean"] == pytest.approx(0.8)
        assert records[0]["clip_upper_mean"] == pytest.approx(1.28)


def test_trainer_records_a_step_before_its_eval_and_the_reader_merges_them(tmp_path, monkeypatch):
    from openrlhf.trainer.ppo_trainer import BasePPOTrainer

    trainer = _bare_trainer(tmp_path, "infoppo", eval_steps=2)
    trainer.eval_dataloader = object()
    monkeypatch.setattr(
        type(trainer).__mro__[1],
        "evaluate",
        lambda self, step, **kw: {"eval_aime24_pass1": 0.125},
        raising=False,
    )
    assert issubclass(type(trainer), BasePPOTrainer)
    trainer.save_logs_and_checkpoints(2, {"rollout/reward_mean": 0.5}, {})
    assert read_metrics(tmp_path / "metrics.jsonl")[0]["reward_mean"] == 0.5  # kept if a stop cuts the eval
    trainer.evaluate(2)
    (record,) = read_metrics(tmp_path / "metrics.jsonl")
    assert record["reward_mean"] == 0.5 and record["eval_aime24"] == pytest.approx(12.5)
    step, phase, evaluated = trainer.told  # the step (its eval to come), the eval's phase, its result
    assert (step["event"], step["step"], step["reward"], step["evals_left"]) == ("step", 2, 0.5, 1)
    assert (phase["phase"], phase["total"]) == ("eval", None)  # a dataloader without a dataset: no count
    assert evaluated["event"] == "eval" and evaluated["accuracy"] == {"aime24": pytest.approx(12.5)}


def test_the_last_step_is_checkpointed_once_also_off_the_save_steps_grid(tmp_path, monkeypatch):
    import openrlhf.trainer.ppo_trainer as upstream

    trainer = _bare_trainer(tmp_path, "infoppo")
    trainer.settings = method_settings("infoppo", rl_steps=3)
    trainer.args.ckpt.save_steps = 2
    saved = []
    trainer.actor_model_group = SimpleNamespace(async_run_method=lambda **kw: saved.append(kw["tag"]) or [])
    trainer.critic_model_group = None
    trainer.best_eval_metric_key = trainer.best_eval_metric_value = trainer._latest_eval_metric_value = None
    monkeypatch.setattr(upstream.ray, "get", lambda refs: refs)
    for step in (1, 2, 3):
        trainer.save_logs_and_checkpoints(step, {"rollout/reward_mean": 0.5}, {})
    assert saved == ["global_step2", "global_step3"]  # step 2 on the grid, step 3 because it is the last
    assert trainer.args.ckpt.save_steps == 2
    assert [r["step"] for r in read_metrics(tmp_path / "metrics.jsonl")] == [1, 2, 3]
    assert [(e["step"], e["steps"]) for e in trainer.told] == [(1, 3), (2, 3), (3, 3)]


def test_rollout_fixture_is_realistic():
    (exp,) = rollout_experiences(n_experiences=1)
    assert exp.values[~exp.action_mask].abs().sum() == 0


class _Prompts(list):
    """A prompts dataloader as upstream's ``fit`` reads it: its length and its state."""

    def state_dict(self) -> dict:
        return {}


def test_the_step_budget_ends_upstreams_loop_which_closes_its_trackers(tmp_path, monkeypatch):
    from functools import partial

    trainer = _bare_trainer(tmp_path, "infoppo")
    trainer.settings = method_settings("infoppo", rl_steps=2)
    trainer.args.train.num_episodes = 3
    trainer.args.rollout.batch_size = 2
    trainer.generate_kwargs = {}
    trainer.prompts_dataloader = _Prompts(range(4))
    trainer.init_checkpoint_states = lambda: {
        "episode": 0,
        "global_step": 0,
        "total_consumed_prompts": 0,
        "data_loader_state_dict": None,
    }
    trainer.restore_best_checkpoint_state = lambda states: None
    closed = []
    trainer.wandb_logger = SimpleNamespace(log_train=lambda *a: None, close=lambda: closed.append("wandb"))
    drawn = []

    def draw(**kwargs):  # the data never runs out: only the budget ends the run
        drawn.append(len(drawn))
        return ["a", "b"], None, 1, False

    trainer.samples_generator = SimpleNamespace(generate_samples=partial(trainer._draw_within_budget, draw))
    monkeypatch.setattr(
        type(trainer).__mro__[1], "train_step", lambda self, samples, step: ({"policy_loss": 0.5}, step + 1)
    )
    trainer.fit()
    assert trainer.steps_done == 2 and len(drawn) == 2  # the later episodes end at their first draw
    assert closed == ["wandb"]  # upstream's fit closed its tracker after its loop
    assert [r["step"] for r in read_metrics(tmp_path / "metrics.jsonl")] == [1, 2]
    assert trainer.samples_generator.generate_samples() == ([], None, 0, True)
    assert [e["phase"] for e in trainer.told if e["event"] == "phase"] == ["generate", "train"] * 2


class _Wandb:
    """wandb as upstream's logger drives it: after ``close`` (``wandb.finish``) a log raises."""

    def __init__(self) -> None:
        self.logged: list[tuple[str, int, dict]] = []
        self.closed = False

    def _log(self, kind: str, step: int, logs: dict) -> None:
        if self.closed:
            raise RuntimeError("You must call wandb.init() before wandb.log()")
        self.logged.append((kind, step, dict(logs)))

    def log_train(self, step: int, logs: dict) -> None:
        self._log("train", step, logs)

    def log_eval(self, step: int, logs: dict) -> None:
        self._log("eval", step, logs)

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize(("steps", "eval_every"), [(2, 10), (3, 2), (2, 2)])
def test_the_last_eval_reaches_the_trackers_before_they_close(tmp_path, monkeypatch, steps, eval_every):
    """Whatever the run's length and eval grid: a last step off the grid is evaluated after upstream's
    loop, which closes the trackers as it ends; the eval must come first (else wandb raises and a
    trained run fails without ``final/``)."""
    trainer = _bare_trainer(tmp_path, "infoppo", eval_steps=eval_every)
    trainer.settings = method_settings("infoppo", rl_steps=steps, eval_before=False)
    trainer.args.train.num_episodes = 1
    trainer.args.rollout.batch_size = 2
    trainer.generate_kwargs = {}
    trainer.eval_dataloader = object()
    trainer.prompts_dataloader = _Prompts(range(100))
    trainer.init_checkpoint_states = lambda: {"episode": 0, "global_step": 0, "total_consumed_prompts": 0}
    trainer.restore_best_checkpoint_state = lambda states: None
    trainer.save_best_checkpoint = lambda logs, step, client_states=None: None
    trainer.wandb_logger = wandb = _Wandb()
    trainer.samples_generator = SimpleNamespace(
        generate_samples=partial(trainer._draw_within_budget, lambda **kw: (["a", "b"], None, 1, False))
    )
    upstream = type(trainer).__mro__[1]
    monkeypatch.setattr(upstream, "train_step", lambda self, samples, step: ({"policy_loss": 0.5}, step + 1))
    monkeypatch.setattr(upstream, "evaluate", lambda self, step, **kw: {"eval_aime24_pass1": 0.25})
    trainer.fit()
    evals = [(step, logs) for kind, step, logs in wandb.logged if kind == "eval"]
    assert [step for step, _ in evals][-1] == steps and wandb.closed
    assert evals[-1][1]["eval_aime24"] == 25.0 and evals[-1][1]["eval_aime24_reward_mean"] == 0.25
    assert not [key for _, logs in evals for key in logs if key.endswith("_pass1")]
    assert read_metrics(tmp_path / "metrics.jsonl")[-1]["eval_aime24"] == 25.0


def test_a_failed_fit_leaves_the_trackers_unclosed_as_upstream_does(tmp_path, monkeypatch):
    trainer = _bare_trainer(tmp_path, "infoppo")
    trainer.init_checkpoint_states = lambda: {"global_step": 0}
    trainer.wandb_logger = wandb = _Wandb()

    def broken_fit(self, global_step=0):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(trainer).__mro__[1], "fit", broken_fit)
    with pytest.raises(OSError):
        trainer.fit()
    assert not wandb.closed
    wandb.close()  # its own method again
    assert wandb.closed


def test_the_opening_eval_is_the_base_models_or_the_interrupted_steps(tmp_path):
    trainer = _bare_trainer(tmp_path, "infoppo", eval_steps=2)
    assert trainer._opening_eval(0, set()) is None  # no eval data
    trainer.eval_dataloader = object()
    trainer.settings = method_settings("infoppo", eval_before=True)
    assert trainer._opening_eval(0, set()) == 0
    assert trainer._opening_eval(4, set()) == 4  # a resume after a stop during step 4's eval
    assert trainer._opening_eval(4, {4}) is None and trainer._opening_eval(3, set()) is None
    trainer.settings = method_settings("infoppo", eval_before=False)
    assert trainer._opening_eval(0, set()) is None


@pytest.mark.parametrize(("first", "synced_first"), [(0, False), (4, True)])
def test_a_resumed_run_syncs_the_engines_before_it_evaluates_its_interrupted_step(
    tmp_path, monkeypatch, first, synced_first
):
    """The engines start from the base model, and upstream's fit syncs them only as it begins: the
    opening eval of a resumed step ran before that, on the base model's weights, and was recorded as the
    step's (52.6% at step 30 of an ablation run at 88% at step 25). The base model's own eval needs none."""
    trainer = _bare_trainer(tmp_path, "infoppo", eval_steps=2)
    trainer.eval_dataloader = object()
    trainer.init_checkpoint_states = lambda: {"global_step": first}
    trainer.settings = method_settings("infoppo", eval_before=True, rl_steps=6)
    calls = []
    upstream = type(trainer).__mro__[1]
    monkeypatch.setattr(upstream, "broadcast_to_vllm", lambda self: calls.append("sync"))
    monkeypatch.setattr(trainer, "_evaluate_now", lambda step: calls.append(f"eval {step}"))
    monkeypatch.setattr(upstream, "fit", lambda self, global_step=0: calls.append("upstream fit"))
    trainer.fit()
    assert calls[:3] == (
        ["sync", f"eval {first}", "upstream fit"] if synced_first else ["eval 0", "upstream fit"]
    )


def test_the_eval_phase_counts_the_prompts_a_dataloader_holds():
    from infoppo_cli.openrlhf_adapter.actors import _dataset_size

    assert _dataset_size(SimpleNamespace(dataset=[1, 2, 3])) == 3
    assert _dataset_size(SimpleNamespace(dataset=iter([1]))) is None and _dataset_size(object()) is None


def test_a_checkpoint_folder_that_holds_no_checkpoint_starts_the_loop_at_step_0(tmp_path, monkeypatch):
    """Upstream loads from ``ckpt/_actor`` whenever the folder exists; with no checkpoint in it the actor
    hands back no states, and upstream's loop failed reading "episode" (a CI run resumed after a full
    disk had cut off the first save)."""
    from infoppo_cli.openrlhf_adapter.actors import NEW_RUN_STATES

    trainer = _bare_trainer(tmp_path, "infoppo")
    upstream = type(trainer).__mro__[1]
    monkeypatch.setattr(upstream, "init_checkpoint_states", lambda self: {})
    assert trainer.init_checkpoint_states() == NEW_RUN_STATES
    loaded = {"episode": 1, "global_step": 4, "total_consumed_prompts": 8, "data_loader_state_dict": {"i": 2}}
    monkeypatch.setattr(upstream, "init_checkpoint_states", lambda self: dict(loaded))
    assert trainer.init_checkpoint_states() == loaded
