"""infoppo's subclasses of OpenRLHF's Ray actors; every patch runs in the process that needs it."""

from __future__ import annotations

from typing import Any

import ray
import torch
from openrlhf.trainer.ppo_trainer import PPOTrainer
from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

from infoppo_cli.openrlhf_adapter.checkpoints import rotate_hf_copies
from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY, ensure_experience_fields
from infoppo_cli.openrlhf_adapter.experience_maker import InfoExperienceMaker
from infoppo_cli.openrlhf_adapter.metrics_log import TrainMetricsLog, step_record
from infoppo_cli.openrlhf_adapter.old_policy import install_chunked_entropy, old_policy_forward
from infoppo_cli.openrlhf_adapter.policy_loss import InfoPolicyLoss, install_info_loss
from infoppo_cli.openrlhf_adapter.reward_func import reward_style
from infoppo_cli.openrlhf_adapter.settings import InfoSettings
from infoppo_cli.openrlhf_adapter.step_metrics import (
    ClipLoggingLoss,
    RolloutRecorder,
    add_entropy_diagnostics,
    install_clip_logging,
)

# Ray actor classes cannot be subclassed through their remote wrapper; the class underneath can.
_UpstreamPolicyActor = PolicyModelActor.__ray_actor_class__
_UpstreamTrainer = PPOTrainer.__ray_actor_class__


def _loss_chain(trainer: Any) -> list[Any]:
    """The actor's loss and every loss it wraps (``.inner``), outermost first."""
    chain, loss = [], getattr(trainer, "actor_loss_fn", None)
    while loss is not None:
        chain.append(loss)
        loss = getattr(loss, "inner", None)
    return chain


@ray.remote(num_gpus=1)
class InfoPolicyModelActor(_UpstreamPolicyActor):
    """The actor worker of every method: old-policy entropy, the infoppo policy loss (which is
    upstream's for fixed clip and all tokens), clip diagnostics, and rotated HF checkpoints."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ensure_experience_fields()  # before any experience reaches this worker's replay buffer

    def init_model_from_pretrained(self, strategy, *args, **kwargs):
        settings = InfoSettings.from_args(strategy.args)
        bonus = bool(strategy.args.actor.entropy_coef)  # None or 0: no entropy gradient is needed
        install_chunked_entropy(settings.entropy_chunk_size, entropy_gradient=bonus)
        super().init_model_from_pretrained(strategy, *args, **kwargs)
        install_info_loss(self.trainer, settings)
        install_clip_logging(self.trainer)

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
            from openrlhf.utils.vlm_utils import merge_mm_train_inputs

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
        import openrlhf.models.actor as actor_module
        from openrlhf.trainer.ppo_utils.experience import Experience

        trainer = getattr(self, "trainer", None)
        return {
            "experience_fields": [f for f in (OLD_ENTROPY, INFO_RHO) if f in Experience.__dataclass_fields__],
            "chunked_entropy": bool(getattr(actor_module.compute_entropy, "_infoppo_chunked", False)),
            "info_policy_loss": any(isinstance(loss, InfoPolicyLoss) for loss in _loss_chain(trainer)),
            "clip_logging": any(isinstance(loss, ClipLoggingLoss) for loss in _loss_chain(trainer)),
            "class": type(self).__name__,
        }


@ray.remote
class InfoPPOTrainer(_UpstreamTrainer):
    """The single controller: infoppo's experience maker (InfoPPO, DAPO-FT) and ``metrics.jsonl``
    (every method, so baselines are logged the same way)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        strategy = args[1] if len(args) > 1 else kwargs["strategy"]
        self.settings = InfoSettings.from_args(strategy.args)
        ensure_experience_fields()  # this process concatenates and splits experiences too
        super().__init__(*args, **kwargs)
        self.experience_maker = InfoExperienceMaker.replacing(self.experience_maker, self.settings)
        self._with_entropy_diagnostics(self.experience_maker)
        self.rollout_recorder = RolloutRecorder(
            self.samples_generator, self.args.rollout.n_samples_per_prompt
        )
        self.metrics_log = TrainMetricsLog(self.settings.metrics_path, reward_style() == "signed")

    def _with_entropy_diagnostics(self, maker: InfoExperienceMaker) -> None:
        upstream = maker.make_experience_batch

        def make_experience_batch(rollout_samples):  # the old entropy is dropped after (no loss reads it)
            return add_entropy_diagnostics(upstream(rollout_samples), self.settings.norm)

        maker.make_experience_batch = make_experience_batch

    def save_logs_and_checkpoints(self, global_step, logs_dict=None, client_states=None):
        actor = self.args.actor
        fixed = tuple(actor.eps_clip_low_high or (actor.eps_clip, actor.eps_clip))  # OpenRLHF's default
        fixed_clip = None if self.settings.clip == "adaptive" else fixed
        eval_follows = self.eval_dataloader is not None and global_step % self.args.eval.steps == 0
        logs_dict = {**(logs_dict or {}), **self.rollout_recorder.take()}
        self.metrics_log.record_step(step_record(global_step, logs_dict or {}, fixed_clip), eval_follows)
        return super().save_logs_and_checkpoints(global_step, logs_dict, client_states)

    def evaluate(self, global_step, **generate_kwargs):
        logs = super().evaluate(global_step, **generate_kwargs)
        self.metrics_log.record_eval(global_step, logs)
        return logs

    def fit(self, global_step: int = 0) -> None:
        try:
            return super().fit(global_step)
        finally:
            self.metrics_log.flush()
