"""infoppo's subclasses of OpenRLHF's Ray actors; every patch runs in the process that needs it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sized
from contextlib import contextmanager
from functools import partial
from typing import Any

import openrlhf.models.actor as actor_module
import ray
import torch
from openrlhf.trainer.ppo_trainer import PPOTrainer
from openrlhf.trainer.ppo_utils.experience import Experience
from openrlhf.trainer.ray.ppo_actor import PolicyModelActor
from openrlhf.trainer.ray.ppo_critic import CriticModelActor
from openrlhf.utils.vlm_utils import merge_mm_train_inputs

from infoppo_cli.atomic import follow_umask
from infoppo_cli.openrlhf_adapter.checkpoints import (
    drop_partial_checkpoints,
    rotate_hf_copies,
    whole_checkpoint_or_none,
)
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY, ensure_experience_fields
from infoppo_cli.openrlhf_adapter.experience_maker import InfoExperienceMaker
from infoppo_cli.openrlhf_adapter.full_batches import FullBatches
from infoppo_cli.openrlhf_adapter.metrics_log import (
    OPTIMIZER_STEPS,
    PROMPTS_TRAINED,
    RESPONSES_TRAINED,
    TrainMetricsLog,
    bench_accuracies,
    eval_record,
    step_record,
)
from infoppo_cli.openrlhf_adapter.old_policy import install_chunked_entropy, old_policy_forward
from infoppo_cli.openrlhf_adapter.policy_loss import InfoPolicyLoss, install_info_loss
from infoppo_cli.openrlhf_adapter.ports import reserve_port
from infoppo_cli.openrlhf_adapter.progress import TrainerProgress, fold_upstream_bars
from infoppo_cli.openrlhf_adapter.settings import InfoSettings
from infoppo_cli.openrlhf_adapter.step_metrics import RolloutRecorder

# Ray actor classes cannot be subclassed through their remote wrapper; the class underneath can.
_UpstreamPolicyActor = PolicyModelActor.__ray_actor_class__
_UpstreamTrainer = PPOTrainer.__ray_actor_class__
_UpstreamCritic = CriticModelActor.__ray_actor_class__

NEW_RUN_STATES: dict[str, Any] = {
    "episode": 0,
    "global_step": 0,
    "total_consumed_prompts": 0,
    "data_loader_state_dict": {},
}
LOOP_STATES = tuple(NEW_RUN_STATES)
"""What upstream's loop keeps in a step's checkpoint (its ``client_states``) and reads back on a resume:
a resumed step's eval saves its best checkpoint with these (a loaded checkpoint's states also hold
DeepSpeed's own keys, which a save refuses)."""


@ray.remote(num_gpus=1)
class InfoPolicyModelActor(_UpstreamPolicyActor):
    """The actor worker of every method: old-policy entropy, the infoppo policy loss (which is
    upstream's for fixed clip and all tokens), clip diagnostics, and rotated HF checkpoints."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ensure_experience_fields()  # before any experience reaches this worker's replay buffer

    @staticmethod
    def _get_free_port() -> int:
        return reserve_port()  # upstream's bind(0) port can be taken before DeepSpeed binds it

    def init_model_from_pretrained(self, strategy, *args, **kwargs):
        settings = InfoSettings.from_args(strategy.args)
        bonus = bool(strategy.args.actor.entropy_coef)  # None or 0: no entropy gradient is needed
        install_chunked_entropy(settings.entropy_chunk_size, entropy_gradient=bonus)
        super().init_model_from_pretrained(strategy, *args, **kwargs)
        install_info_loss(self.trainer, settings)

    def fit(self, kl_ctl: float = 0):
        """Upstream's training on the replay buffer; its status also says how many optimizer steps the
        DeepSpeed engine has taken in all (what happened, not what the plan expects)."""
        status = super().fit(kl_ctl)
        return {**status, OPTIMIZER_STEPS: float(self.actor.model.global_steps)}

    def save_model(self):
        """Upstream's final save (``final/``), its weights file given the umask's mode like every other
        file of the run (the library writes it owner-only)."""
        super().save_model()
        if self.strategy.is_rank_0():
            follow_umask(self.strategy.args.ckpt.output_dir)

    def save_checkpoint(self, tag, client_states=None, metric_value=None, metric_key=None):
        """Upstream's save, with the per-step HF copies rotated like the DeepSpeed checkpoints."""
        args = self.strategy.args
        if args.ckpt.save_hf and self.strategy.is_rank_0():
            rotate_hf_copies(args.ckpt.path, tag, args.ckpt.max_num)
        return super().save_checkpoint(tag, client_states, metric_value, metric_key)

    def forward(
        self,
        sequences,
        action_mask=None,
        attention_mask=None,
        packed_seq_lens=None,
        mm_train_inputs_list=None,
    ):
        """Returns ``(log_probs, entropy)`` instead of upstream's ``log_probs`` alone."""
        device = torch.cuda.current_device()
        mm_inputs = {}
        if mm_train_inputs_list and getattr(self.actor, "is_vlm", False):
            mm_inputs = merge_mm_train_inputs(mm_train_inputs_list, device)
        return old_policy_forward(
            self.actor,
            sequences,
            action_mask,
            attention_mask,
            device,
            self.strategy.ring_attn_group,
            mm_inputs,
        )

    def infoppo_status(self) -> dict[str, Any]:
        """What this worker process has patched (for logs and tests)."""
        trainer = getattr(self, "trainer", None)
        return {
            "experience_fields": [f for f in (OLD_ENTROPY, INFO_RHO) if f in Experience.__dataclass_fields__],
            "chunked_entropy": bool(getattr(actor_module.compute_entropy, "_infoppo_chunked", False)),
            "info_policy_loss": isinstance(getattr(trainer, "actor_loss_fn", None), InfoPolicyLoss),
            "class": type(self).__name__,
        }


@ray.remote(num_gpus=1)
class InfoCriticModelActor(_UpstreamCritic):
    """OpenRLHF's critic worker, its group's rendezvous port reserved as the actor's is."""

    @staticmethod
    def _get_free_port() -> int:
        return reserve_port()


@ray.remote
class InfoPPOTrainer(_UpstreamTrainer):
    """The single controller: infoppo's experience maker (InfoPPO, DAPO-FT), ``metrics.jsonl`` (every
    method, so baselines are logged the same way), and the run's length: exactly ``rl_steps`` RL
    steps, the base model evaluated first (step 0) and the last step evaluated and saved."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        strategy = args[1] if len(args) > 1 else kwargs["strategy"]
        self.settings = InfoSettings.from_args(strategy.args)
        ensure_experience_fields()  # this process concatenates and splits experiences too
        super().__init__(*args, **kwargs)
        self.experience_maker = InfoExperienceMaker.replacing(self.experience_maker, self.settings)
        self.progress = TrainerProgress()  # the events `infoppo train` shows (progress.py)
        fold_upstream_bars(self.progress)
        self._wrap_sample_generator()
        self.metrics_log = TrainMetricsLog(self.settings.metrics_path, self.settings.reward_values)
        self.steps_done = 0
        self.evaluated_step: int | None = None
        self._step_states: tuple[int, dict[str, Any]] = (0, {})  # the last step's checkpoint states

    def _wrap_sample_generator(self) -> None:
        """Wrap ``generate_samples`` of this trainer's own sample generator, the one place its layers
        are composed (rows of ``patches.PATCHES``), innermost first: the rollout recorder sees
        upstream's draws, full batches regroup them, and the step budget ends the run."""
        generator, rollout = self.samples_generator, self.args.rollout
        self.rollout_recorder = RolloutRecorder(generator, rollout.n_samples_per_prompt)
        recorded = partial(self.rollout_recorder.draw, generator.generate_samples)
        self.full_batches = FullBatches(
            recorded,
            rollout.batch_size * rollout.n_samples_per_prompt,
            rollout.n_samples_per_prompt,
            self.settings.keep_stale_surplus,
        )
        generator.generate_samples = partial(self._draw_within_budget, self.full_batches)

    def _draw_within_budget(self, draw: Callable[..., tuple], **kwargs: Any) -> tuple:
        """One draw of the sample generator or, once the run has made its planned RL steps, no samples
        and an exhausted dataloader: upstream's loop then ends each remaining episode at its first draw
        and closes its trackers (pinned by ``a_spent_step_budget_ends_the_remaining_episodes``)."""
        if self._budget_spent():
            return [], None, 0, True
        phase = self.progress.phase
        if phase is None or phase["phase"] != "generate":  # a short batch's next draw goes on
            self.progress.start_phase("generate", self.steps_done + 1, self.args.rollout.batch_size)
        return draw(**kwargs)

    def _budget_spent(self) -> bool:
        return bool(self.settings.rl_steps) and self.steps_done >= self.settings.rl_steps

    def get_max_steps(self):
        """The learning-rate schedule's length: the planned run's optimizer steps (upstream counts
        ``num_episodes`` passes, which the plan sizes for dynamic filtering's worst case)."""
        return self.settings.total_optimizer_steps or super().get_max_steps()

    def _is_last_step(self, global_step: int) -> bool:
        return bool(self.settings.rl_steps) and global_step >= self.settings.rl_steps

    def _eval_due(self, global_step: int) -> bool:
        every = self.args.eval.steps
        return self.eval_dataloader is not None and (
            global_step % every == 0 or self._is_last_step(global_step)
        )

    def _evals_left(self, after: int) -> int:
        """The evals still to run after step ``after`` (0 when the run's length is not planned)."""
        steps = self.settings.rl_steps
        return sum(1 for step in range(after + 1, steps + 1) if self._eval_due(step)) if steps else 0

    def train_step(self, rollout_samples, global_step: int):
        self.progress.start_phase("train", global_step + 1, None)
        status, step = super().train_step(rollout_samples, global_step)
        self.steps_done = step
        responses = len(rollout_samples)
        prompts = responses / max(int(self.args.rollout.n_samples_per_prompt), 1)
        return {**status, RESPONSES_TRAINED: float(responses), PROMPTS_TRAINED: prompts}, step

    def save_logs_and_checkpoints(self, global_step, logs_dict=None, client_states=None):
        actor = self.args.actor
        fixed = tuple(actor.eps_clip_low_high or (actor.eps_clip, actor.eps_clip))  # OpenRLHF's default
        fixed_clip = None if self.settings.clip_rule.uses_rho else fixed
        logs_dict = {**(logs_dict or {}), **self.rollout_recorder.take(), **self.full_batches.take()}
        record = step_record(global_step, logs_dict, fixed_clip)
        self.metrics_log.record_step(record)
        self._step_states = (global_step, _loop_states(client_states or {}))
        with self._saving_the_last_step(global_step), self._whole(f"global_step{global_step}"):
            result = super().save_logs_and_checkpoints(global_step, logs_dict, client_states)
        evals_left = self._evals_left(global_step) + int(self._eval_due(global_step))  # its own follows
        self.progress.step_done(global_step, self.settings.rl_steps, record, evals_left)
        return result

    def save_best_checkpoint(self, eval_metrics, global_step, client_states=None):
        with self._whole(f"best_global_step{global_step}"):
            return super().save_best_checkpoint(eval_metrics, global_step, client_states)

    def _whole(self, tag: str):
        """A checkpoint save that fails (a full disk) leaves no partial checkpoint, and ``latest`` as it
        was (``checkpoints.whole_checkpoint_or_none``)."""
        return whole_checkpoint_or_none(self.args.ckpt.path, tag)

    @contextmanager
    def _saving_the_last_step(self, global_step: int) -> Iterator[None]:
        """Around upstream's ``save_logs_and_checkpoints``: the run's last step is checkpointed also off
        the ``ckpt.save_steps`` grid.

        Upstream saves when ``global_step % self.args.ckpt.save_steps == 0`` and has no other way to ask
        for a save, so for this one call its own argument tree says ``save_steps = global_step``; the
        plan's value is back after it, also when the save fails. This is the one place where infoppo
        changes upstream's arguments in place: ``self.args`` is this trainer's own copy (Ray hands each
        worker its own), and only the upstream method called here reads ``save_steps`` meanwhile.
        """
        ckpt = self.args.ckpt
        every = ckpt.save_steps
        off_grid = self._is_last_step(global_step) and every != float("inf") and global_step % every
        ckpt.save_steps = global_step if off_grid else every
        try:
            yield
        finally:
            ckpt.save_steps = every

    def evaluate(self, global_step, **generate_kwargs):
        """Upstream's eval, its logs renamed to say what they hold (``metrics_log.eval_fields``: an
        accuracy, a mean reward) before they reach ``metrics.jsonl`` and the trackers."""
        self.progress.start_phase("eval", global_step, _dataset_size(self.eval_dataloader))
        with self._trackers_aside() as trackers:  # upstream would log its own names to them
            upstream = super().evaluate(global_step, **generate_kwargs)
        logs = eval_record(upstream, self.metrics_log.reward_values)
        for tracker in trackers:
            tracker.log_eval(global_step, logs)
        self.evaluated_step = global_step
        self.metrics_log.record_eval(global_step, logs)
        self.progress.eval_done(global_step, bench_accuracies(logs), self._evals_left(global_step))
        return logs

    @contextmanager
    def _trackers_aside(self) -> Iterator[list[Any]]:
        """Upstream's trackers (wandb, TensorBoard) taken out of its reach for a call; yields them."""
        trackers = [self.wandb_logger, self.tensorboard_logger]
        self.wandb_logger = self.tensorboard_logger = None
        try:
            yield [tracker for tracker in trackers if tracker is not None]
        finally:
            self.wandb_logger, self.tensorboard_logger = trackers

    @contextmanager
    def _trackers_open_to_the_end(self) -> Iterator[None]:
        """Around upstream's ``fit``, which closes wandb and TensorBoard as its loop ends: they are closed
        after the run's last eval instead, which follows that loop when the last step is off the eval
        grid (a closed wandb refuses to log, and the run would fail after training). A run that fails
        leaves them as upstream does, unclosed."""
        trackers = [tracker for tracker in (self.wandb_logger, self.tensorboard_logger) if tracker]
        closes = [tracker.close for tracker in trackers]
        for tracker in trackers:
            tracker.close = _not_yet
        try:
            yield
        finally:
            for tracker, close in zip(trackers, closes, strict=True):
                tracker.close = close
        for close in closes:
            close()

    def _evaluate_now(self, global_step: int) -> None:
        kwargs = {
            **self.generate_kwargs,
            "temperature": self.args.eval.temperature,
            "n_samples_per_prompt": self.args.eval.n_samples_per_prompt,
        }
        logs = self.evaluate(global_step, **kwargs)
        if global_step > 0:  # the base model is never "the best checkpoint"
            # With the step's own states, as upstream's loop saves it: DeepSpeed points ``latest`` at
            # the best checkpoint, and a resume from one without them fails (no "episode").
            step, states = self._step_states
            self.save_best_checkpoint(logs, global_step, states if step == global_step else None)

    def init_checkpoint_states(self) -> dict[str, Any]:
        """Upstream's loop states from the loaded checkpoint, or a new run's where ``ckpt/_actor``
        holds none: upstream takes the folder's presence for a checkpoint and would fail reading its
        "episode" (``train/resume.py`` has already said the run continues from step 0)."""
        states = super().init_checkpoint_states()
        return states if "episode" in states else {**NEW_RUN_STATES, **states}

    def fit(self, global_step: int = 0) -> None:
        """Upstream's loop (which the step budget ends after the planned RL steps) between infoppo's
        evals: the base model's or a resumed step's before it, the last step's after it."""
        drop_partial_checkpoints(self.args.ckpt.path)  # a killed save's folders are no checkpoints
        states = self.init_checkpoint_states()
        self.steps_done = first = int(states.get("global_step", 0) or 0)
        self._step_states = (first, _loop_states(states))
        self.metrics_log.resumed(first)
        done = self.metrics_log.evaluated_steps() if self.eval_dataloader is not None else set()
        opening = self._opening_eval(first, done)
        self.progress.begin(first, self.settings.rl_steps, self._evals_left(first) + int(opening is not None))
        with self._trackers_open_to_the_end():
            if opening is not None:
                if first > 0:  # the engines hold the base model: upstream's fit syncs them after this
                    self.broadcast_to_vllm()
                self._evaluate_now(opening)
            super().fit(global_step)
            if self._last_step_unevaluated(done):  # also when the data ran out before rl_steps
                self._evaluate_now(self.steps_done)

    def _opening_eval(self, first: int, done: set[int]) -> int | None:
        """The step to evaluate before training from step ``first``: the base model (0) where the plan
        asks for it, or the step a resumed run stopped in during its eval (``done``: evals recorded)."""
        if self.eval_dataloader is None:
            return None
        if first == 0:
            return 0 if self.settings.eval_before else None
        return first if self._eval_due(first) and first not in done else None

    def _last_step_unevaluated(self, done: set[int]) -> bool:
        """Whether the run's last step has no eval yet (``done``: evals recorded before this run)."""
        last = self.steps_done
        if self.eval_dataloader is None or last == 0:
            return False
        return self.evaluated_step != last and last not in done


def _loop_states(states: dict[str, Any]) -> dict[str, Any]:
    """``states`` (a step's ``client_states`` or a loaded checkpoint's) with ``LOOP_STATES`` only, copied."""
    return {key: states[key] for key in LOOP_STATES if key in states}


def _dataset_size(dataloader: Any) -> int | None:
    """The prompts a dataloader holds, ``None`` when it cannot say."""
    dataset = getattr(dataloader, "dataset", None)
    return len(dataset) if isinstance(dataset, Sized) else None


def _not_yet() -> None:
    """A tracker's ``close`` while the run's last eval is still to come."""
