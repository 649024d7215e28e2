"""infoppo's subclasses of OpenRLHF's Ray actors; every patch runs in the process that needs it."""

from __future__ import annotations

from typing import Any

import ray
import torch
from openrlhf.trainer.ppo_trainer import PPOTrainer
from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

from infoppo_cli.openrlhf_adapter.experience_fields import INFO_RHO, OLD_ENTROPY, ensure_experience_fields
from infoppo_cli.openrlhf_adapter.experience_maker import InfoExperienceMaker
from infoppo_cli.openrlhf_adapter.metrics_log import TrainMetricsLog, step_record
from infoppo_cli.openrlhf_adapter.old_policy import install_chunked_entropy, old_policy_forward
from infoppo_cli.openrlhf_adapter.policy_loss import InfoPolicyLoss, install_info_loss
from infoppo_cli.openrlhf_adapter.settings import InfoSettings

# Ray actor classes cannot be subclassed through their remote wrapper; the class underneath can.
_UpstreamPolicyActor = PolicyModelActor.__ray_actor_class__
_UpstreamTrainer = PPOTrainer.__ray_actor_class__


@ray.remote(num_gpus=1)
class InfoPolicyModelActor(_UpstreamPolicyActor):
    """The actor worker for InfoPPO and DAPO-FT: old-policy entropy and the infoppo policy loss."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ensure_experience_fields()  # before any experience reaches this worker's replay buffer

    def init_model_from_pretrained(self, strategy, *args, **kwargs):
        settings = InfoSettings.from_args(strategy.args)
        install_chunked_entropy(settings.entropy_chunk_size)
        super().init_model_from_pretrained(strategy, *args, **kwargs)
        install_info_loss(self.trainer, settings)

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
            "info_policy_loss": isinstance(getattr(trainer, "actor_loss_fn", None), InfoPolicyLoss),
            "class": type(self).__name__,
        }


@ray.remote
class InfoPPOTrainer(_UpstreamTrainer):
    """The single controller: infoppo's experience maker (InfoPPO, DAPO-FT) and ``metrics.jsonl``
    (every method, so baselines are logged the same way)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        strategy = args[1] if len(args) > 1 else kwargs["strategy"]
        self.settings = InfoSettings.from_args(strategy.args)
        if self.settings.needs_old_entropy:
            ensure_experience_fields()  # this process concatenates and splits experiences too
        super().__init__(*args, **kwargs)
        if self.settings.needs_old_entropy:
            self.experience_maker = InfoExperienceMaker.replacing(self.experience_maker, self.settings)
        self.metrics_log = TrainMetricsLog(self.settings.metrics_path)

    def save_logs_and_checkpoints(self, global_step, logs_dict=None, client_states=None):
        fixed_clip = None if self.settings.method == "infoppo" else tuple(self.args.actor.eps_clip_low_high)
        eval_follows = self.eval_dataloader is not None and global_step % self.args.eval.steps == 0
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
