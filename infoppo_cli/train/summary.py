"""What ``infoppo train`` shows before it spends GPU hours: the plan as (setting, value) rows."""

from __future__ import annotations

from typing import Any

from infoppo_cli.openrlhf_adapter.checkpoints import disk_use_line
from infoppo_cli.train.plan import TrainPlan

RECIPE_GAPS = (
    "OpenRLHF 0.11.2 cannot express DAPO's generation batch of 3x the train batch (synchronous mode "
    "needs rollout.vllm_generate_batch_size <= rollout.batch_size) nor its cap of 10 regeneration "
    "rounds: each filtered-out group is replaced by one fresh prompt until the batch is full or the "
    "data runs out"
)

Rows = list[tuple[str, Any]]


def _micro_batch(flags: dict[str, Any]) -> str:
    if flags.get("train.dynamic_batch_enable"):
        return f"token-packed micro-batch of <= {flags['train.max_tokens_per_gpu']} tokens"
    return f"micro-batch of {flags.get('train.micro_batch_size', 1)} response(s)"


def _method_rows(plan: TrainPlan) -> Rows:
    flags, info, algo = plan.flags, plan.infotime, plan.method
    rows: Rows = [
        ("method", f"{algo.name}: {algo.summary}"),
        ("method source", algo.source),
        ("components", ", ".join(f"{k}={v}" for k, v in algo.components().items())),
        ("advantage estimator", flags.get("algo.advantage.estimator")),
    ]
    if algo.uses_critic:
        gamma, lambd = flags.get("algo.advantage.gamma"), flags.get("algo.advantage.lambd")
        rows.append(("gamma / lambda", f"{gamma} / {lambd}"))
    if algo.clip == "adaptive":
        rows.append(("adaptive clip eps_low / eps_high", f"{info['eps_low_info']} / {info['eps_high_info']}"))
    else:
        rows.append(("clip low / high", flags.get("actor.eps_clip_low_high")))
    if algo.uses_rho:
        rows.append(("entropy normalisation (rho)", info["norm"]))
    if algo.token_mask == "top_entropy":
        scope = f"top {info['top_entropy_frac']:.0%} of current-policy entropy per {_micro_batch(flags)}"
        rows.append(("policy-loss tokens", f"{scope} (k rounded up), token-mean over the kept tokens"))
    return rows


def _schedule_rows(plan: TrainPlan) -> Rows:
    flags = plan.flags
    if plan.warmup is not None:
        warmup = plan.warmup.describe()
    elif "actor.lr_warmup_ratio" in flags:
        warmup = f"ratio {flags['actor.lr_warmup_ratio']} of OpenRLHF's optimizer steps (--set)"
    else:
        warmup = f"{plan.preset.actor_warmup_steps} RL steps; the ratio is set once the data file exists"
    rows: Rows = [
        ("actor lr / schedule", f"{flags.get('actor.adam.lr')} / {flags.get('actor.lr_scheduler')}"),
        ("actor warm-up", warmup),
    ]
    if plan.method.uses_critic:
        critic = f"{flags.get('critic.adam.lr')} / {flags.get('critic.lr_scheduler')}, no warm-up"
        rows.append(("critic lr / schedule", critic))
    else:
        rows.append(("critic", "none"))
    return rows


def _shape_rows(flags: dict[str, Any]) -> Rows:
    prompts, n = int(flags["rollout.batch_size"]), int(flags["rollout.n_samples_per_prompt"])
    train_batch = int(flags["train.batch_size"])
    per_step = prompts * n // train_batch * int(flags.get("train.max_epochs", 1))
    rows: Rows = [
        ("step shape", f"{prompts} prompts x {n} responses = {prompts * n} responses per RL step"),
        ("optimizer step", f"{train_batch} responses ({train_batch / n:g} prompts); {per_step} per RL step"),
        ("micro-batching", f"{_micro_batch(flags)} per GPU"),
    ]
    if flags.get("actor.dual_clip"):
        rows.append(("dual-clip constant", flags["actor.dual_clip"]))
    if flags.get("algo.dynamic_filtering_enable"):
        rows.append(
            ("dynamic sampling", f"keep groups with mean score in {flags['algo.dynamic_filtering_range']}")
        )
        rows.append(("not expressible", RECIPE_GAPS))
    if flags.get("reward.overlong_buffer_len"):
        penalty = flags.get("reward.overlong_penalty_factor", 1.0)
        rows.append(
            ("overlong buffer / penalty", f"{flags['reward.overlong_buffer_len']} tokens / {penalty}")
        )
    return rows


def summary_rows(plan: TrainPlan) -> list[tuple[str, str]]:
    """The resolved configuration a researcher checks before launching, as strings."""
    flags, info = plan.flags, plan.infotime
    layout = f"{flags['actor.num_nodes']} x {flags['actor.num_gpus_per_node']}"
    engines = f"{flags['vllm.num_engines']} x {flags['vllm.tensor_parallel_size']}"
    rows: Rows = [
        ("model", flags["actor.model_name_or_path"]),
        ("preset source", plan.preset.source),
        *_method_rows(plan),
        *_schedule_rows(plan),
        ("max response / total tokens", f"{flags['rollout.max_new_tokens']} / {flags['data.max_len']}"),
        *_shape_rows(flags),
        ("GPUs (nodes x per node)", layout),
        ("vLLM engines x tensor parallel", engines),
        ("DeepSpeed ZeRO stage", flags.get("ds.zero_stage")),
        ("data", plan.data),
        ("seed", flags.get("train.seed")),
        ("Ray", info.get("ray_address") or "embedded local Ray"),
        ("output dir", str(plan.output_dir)),
        ("in-training eval", plan.evaluation.describe() if plan.evaluation else "off"),
        ("checkpoint disk use", disk_use_line(flags, plan.method.uses_critic)),
        (
            "wandb",
            "on (the key reaches the run as $WANDB_API_KEY only)" if flags.get("logger.wandb.key") else "off",
        ),
    ]
    return [(name, str(value)) for name, value in rows]
