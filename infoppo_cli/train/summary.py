"""What ``infoppo train`` shows before it spends GPU hours: the plan as (setting, value) rows."""

from __future__ import annotations

from typing import Any

from infoppo_cli.components import RHO_SETTING, SETTINGS
from infoppo_cli.openrlhf_adapter.checkpoints import disk_use_line
from infoppo_cli.openrlhf_adapter.local_ray import EMBEDDED_RAY
from infoppo_cli.resources import describe_vllm
from infoppo_cli.train.device import describe_cost
from infoppo_cli.train.length import checkpoint_steps, describe_points, eval_steps
from infoppo_cli.train.plan import TrainPlan
from infoppo_cli.train.tracking import tensorboard_dir, wandb_mode

RECIPE_GAPS = (
    "OpenRLHF 0.11.2 cannot express DAPO's generation batch of 3x the train batch (synchronous mode "
    "needs rollout.vllm_generate_batch_size <= rollout.batch_size) nor its cap of 10 regeneration "
    "rounds: each filtered-out group is replaced by one fresh prompt until the batch is full or the "
    "data runs out"
)

Rows = list[tuple[str, Any]]


def _method_rows(plan: TrainPlan) -> Rows:
    flags, info, algo = plan.flags, plan.infotime, plan.method
    rows: Rows = [
        ("method", f"{algo.name}: {algo.summary}"),
        ("method source", algo.source),
        ("components", ", ".join(f"{k}={v}" for k, v in algo.components().items())),
        ("advantage estimator", flags.get("algo.advantage.estimator")),
    ]
    shown = {"gamma", "lambd", *algo.clip_rule.settings, RHO_SETTING, *algo.loss_tokens.settings}
    if algo.uses_critic:
        gamma, lambd = flags.get("algo.advantage.gamma"), flags.get("algo.advantage.lambd")
        rows.append(("gamma / lambda", f"{gamma} / {lambd}"))
    if algo.clip_rule.uses_rho:
        values = " / ".join(str(info[name]) for name in algo.clip_rule.settings)
        named = " / ".join(name.removesuffix("_info") for name in algo.clip_rule.settings)
        rows.append((f"{algo.clip} clip {named}", values))
    else:
        rows.append(("clip low / high", flags.get("actor.eps_clip_low_high")))
    if algo.uses_rho:
        rows.append(("entropy normalisation (rho)", info[RHO_SETTING]))
    if algo.loss_tokens.by_entropy:
        share = " / ".join(f"{info[name]:.0%}" for name in algo.loss_tokens.settings)
        scope = f"top {share} of current-policy entropy per micro-batch"
        rows.append(("policy-loss tokens", f"{scope} (k rounded up), token-mean over the kept tokens"))
    for setting in SETTINGS.values():  # a setting no row above describes: its value
        if setting.name not in shown and setting.takes(algo):
            rows.append(
                (setting.name, flags.get(setting.openrlhf) if setting.openrlhf else info[setting.name])
            )
    correct, other = algo.reward_values
    reward = f"{correct:+g} correct, {other:+g} otherwise ({algo.reward})"
    if flags.get("reward.overlong_buffer_len"):
        reward += ", plus the overlong penalty"
    rows.append(("reward values", reward))
    rows.append(("AdamW betas", f"{tuple(flags.get('actor.adam.betas', ()))} ({algo.optimizer})"))
    return rows


def _pool(flags: dict[str, Any], worker: str = "GPU") -> str:
    """The micro-batch a training forward sees (DAPO-FT's top-20% is taken over it); ``worker`` is what
    one training process runs on (a GPU, or a CPU worker on a CPU run)."""
    ring = int(flags.get("ds.ring_attn_size", 1))
    if not flags.get("train.dynamic_batch_enable"):
        return f"{flags.get('train.micro_batch_size', 1)} response(s) per {worker}"
    per_gpu, longest = int(flags["train.max_tokens_per_gpu"]), int(flags["data.max_len"])
    tokens = per_gpu * ring
    spread = f" gathered over a ring-attention group of {ring} GPUs" if ring > 1 else ""
    return (
        f"up to {tokens:,} tokens ({per_gpu:,} per {worker}{spread}): {tokens // longest} full-length "
        f"responses, about {2 * tokens // longest} at half length"
    )


def _length_rows(plan: TrainPlan) -> Rows:
    length = plan.length
    source = "--steps" if plan.request.steps else f"preset {plan.preset.name}"
    rows: Rows = [
        ("RL steps", f"{length.rl_steps} ({source})"),
        ("passes over the data", length.describe_passes()),
    ]
    per_step = length.responses_per_step
    extra = "; dynamic sampling also generates the dropped groups" if length.filtering else ""
    rows.append(("responses generated", f"{length.responses:,} ({per_step} per RL step{extra})"))
    rows.append(
        ("optimizer steps", f"{length.optimizer_steps:,} ({length.optimizer_steps_per_rl_step} per RL step)")
    )
    return rows


def _schedule_rows(plan: TrainPlan) -> Rows:
    flags = plan.flags
    if plan.warmup is not None:
        warmup = plan.warmup.describe()
    else:
        warmup = f"ratio {flags['actor.lr_warmup_ratio']} of OpenRLHF's optimizer steps (--set)"
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


def _eval_rows(plan: TrainPlan) -> Rows:
    evaluation, steps, flags = plan.evaluation, plan.length.rl_steps, plan.flags
    if evaluation is None or not evaluation.benches:
        return [("in-training eval", "off")]
    points = eval_steps(steps, evaluation.every, evaluation.before)
    saves = checkpoint_steps(steps, flags.get("ckpt.save_steps"))
    kept = f"the last {flags.get('ckpt.max_num', 3)} kept" if saves else "none"
    best = (
        "; the best by the mean Mean@k over the eval benchmarks" if flags.get("ckpt.best_metric_key") else ""
    )
    return [
        ("in-training eval", evaluation.describe()),
        ("eval at steps", describe_points(points)),
        ("checkpoints", f"at steps {describe_points(saves)} ({kept}){best}"),
    ]


def _device_row(plan: TrainPlan) -> tuple[str, str]:
    text = plan.device.rollout_text
    if plan.cpu_cost is not None:
        text += f"; {describe_cost(plan.cpu_cost)}"
    return (plan.device.rollout_name, text)


def _shape_rows(flags: dict[str, Any], worker: str = "GPU") -> Rows:
    prompts, n = int(flags["rollout.batch_size"]), int(flags["rollout.n_samples_per_prompt"])
    train_batch = int(flags["train.batch_size"])
    per_step = prompts * n // train_batch * int(flags.get("train.max_epochs", 1))
    rows: Rows = [
        ("step shape", f"{prompts} prompts x {n} responses = {prompts * n} responses per RL step"),
        ("optimizer step", f"{train_batch} responses ({train_batch / n:g} prompts); {per_step} per RL step"),
        ("micro-batch (training pool)", _pool(flags, worker)),
    ]
    if flags.get("actor.dual_clip"):
        rows.append(("dual-clip constant", flags["actor.dual_clip"]))
    if flags.get("algo.dynamic_filtering_enable"):
        low, high = (float(bound) for bound in flags["algo.dynamic_filtering_range"])
        rows.append(
            ("dynamic sampling", f"keep groups whose mean score is strictly inside ({low:g}, {high:g})")
        )
        rows.append(("not expressible", RECIPE_GAPS))
    if flags.get("reward.overlong_buffer_len"):
        penalty = flags.get("reward.overlong_penalty_factor", 1.0)
        share = int(flags["reward.overlong_buffer_len"]) / int(flags["rollout.max_new_tokens"])
        rows.append(
            (
                "overlong buffer / penalty",
                f"{flags['reward.overlong_buffer_len']} tokens ({share:.0%} of the maximum response; "
                f"verl recipe/dapo: 20%) / {penalty}",
            )
        )
    return rows


def summary_rows(plan: TrainPlan) -> list[tuple[str, str]]:
    """The resolved configuration a researcher checks before launching, as strings."""
    flags, info = plan.flags, plan.infotime
    layout = f"{flags['actor.num_nodes']} x {flags['actor.num_gpus_per_node']}"
    engines = f"{flags['vllm.num_engines']} x {flags['vllm.tensor_parallel_size']}"
    device = plan.device
    rows: Rows = [
        ("model", flags["actor.model_name_or_path"]),
        ("preset source", plan.preset.source),
        *_method_rows(plan),
        *_length_rows(plan),
        *_schedule_rows(plan),
        ("max response / total tokens", f"{flags['rollout.max_new_tokens']} / {flags['data.max_len']}"),
        *_shape_rows(flags, device.worker),
        _device_row(plan),
        ("vLLM here", describe_vllm()),
        (device.layout_name, layout),
        (device.engines_name, engines),
        (
            "DeepSpeed ZeRO stage / dtype",
            f"{flags.get('ds.zero_stage', 2)} / {flags.get('ds.param_dtype', 'bf16')}",
        ),
        ("data", plan.data),
        ("seed", flags.get("train.seed")),
        ("Ray", info.get("ray_address") or EMBEDDED_RAY),
        ("output dir", str(plan.output_dir)),
        *_eval_rows(plan),
        ("checkpoint disk use", disk_use_line(flags, plan.method.uses_critic)),
        ("wandb", wandb_mode(flags, plan.tracking_env)),
        ("TensorBoard", tensorboard_dir(flags) or "off"),
    ]
    rows += [("note", note) for note in plan.notes]
    return [(name, str(value)) for name, value in rows]
