"""Process entry point: OpenRLHF's real ``train_ppo_ray`` command line with infoppo's actors.

    python -m infoppo_cli.openrlhf_adapter.launch --config RUN/config.json [OpenRLHF flags ...]

``infoppo train`` builds this command (``--dry-run`` prints it) and writes the run's configuration it
names (infoppo's settings, ``settings.py``); it also runs as the entrypoint of a Ray job. Without a
``ray_address`` in the configuration an embedded local Ray is started.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path
from typing import Any

import infoppo_cli
from infoppo_cli.components import ADVANTAGES
from infoppo_cli.openrlhf_adapter.device import DEVICES
from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser
from infoppo_cli.openrlhf_adapter.lifeline import stop_run_on_owner_death
from infoppo_cli.openrlhf_adapter.local_ray import LocalRay
from infoppo_cli.openrlhf_adapter.reward_func import TIMEOUT_ENV, WORKERS_ENV
from infoppo_cli.openrlhf_adapter.settings import CONFIG_ENV, InfoSettings, read_run_config
from infoppo_cli.resources import require_openrlhf

ENTRY_MODULE = "openrlhf.cli.train_ppo_ray"
CRITIC_ESTIMATORS = {entry.openrlhf_estimator for entry in ADVANTAGES.values() if entry.uses_critic}
"""OpenRLHF's estimators under which a critic trains (and needs GPUs of its own)."""


def ray_runtime_env(settings: InfoSettings) -> dict[str, Any]:
    """The environment OpenRLHF's ``train()`` gives Ray when it starts Ray itself (we start it first)."""
    env_vars = {
        "TOKENIZERS_PARALLELISM": os.environ.get("TOKENIZERS_PARALLELISM", "true"),
        "NCCL_DEBUG": os.environ.get("NCCL_DEBUG", "WARN"),
        "RAY_ENABLE_ZERO_COPY_TORCH_TENSORS": os.environ.get("RAY_ENABLE_ZERO_COPY_TORCH_TENSORS", "1"),
    }
    # Of infoppo's variables, the workers read the reward's tuning knobs and where the run's configuration
    # is (reward_func.py; its values are the method's `reward` component, from that file). Nothing else
    # goes: Ray writes every value of the runtime environment to its runtime_env_agent.log.
    passed = (WORKERS_ENV, TIMEOUT_ENV, CONFIG_ENV)  # the last: where the reward reads the run's settings
    env_vars.update({key: os.environ[key] for key in passed if key in os.environ})
    if "TQDM_DISABLE" in os.environ:  # `infoppo train` turns the workers' progress bars off (train/output.py)
        env_vars["TQDM_DISABLE"] = os.environ["TQDM_DISABLE"]
    # Secrets (the wandb key) never go into the runtime environment: Ray writes it to its logs
    # (runtime_env_agent.log). An embedded Ray's workers inherit this process's environment, which
    # holds them; a cluster's nodes must have them in theirs (docs/training.md, "Secrets").
    runtime_env: dict[str, Any] = {"env_vars": env_vars}
    if settings.ray_address:  # a cluster's nodes get this checkout of infoppo with the job
        runtime_env["py_modules"] = [infoppo_cli]
    DEVICES[settings.device].prepare_workers(runtime_env)
    return runtime_env


def gpus_needed(openrlhf_argv: list[str]) -> int:
    """The GPUs OpenRLHF's ``train()`` asks Ray for with these flags: the actor's, plus the critic's,
    the reference model's and the vLLM engines' unless they share GPUs (``train.colocate_*``)."""
    args, _ = openrlhf_parser().parse_known_args(openrlhf_argv)
    flag = vars(args)

    def group(role: str) -> int:
        return int(flag[f"{role}.num_nodes"]) * int(flag[f"{role}.num_gpus_per_node"])

    actor = group("actor")
    engines = int(flag.get("vllm.num_engines") or 0) * int(flag.get("vllm.tensor_parallel_size") or 1)
    if flag.get("train.colocate_all"):
        return max(actor, engines)
    needed = actor + engines
    if (
        flag.get("critic.model_name_or_path")
        and str(flag.get("algo.advantage.estimator")) in CRITIC_ESTIMATORS
    ):
        needed += group("critic")
    uses_reference = float(flag.get("algo.kl.init_coef") or 0) > 0 or bool(flag.get("algo.kl.use_loss"))
    if uses_reference and not flag.get("train.colocate_actor_ref"):
        needed += group("ref")
    return needed


def start_ray(
    settings: InfoSettings, openrlhf_argv: list[str] | None = None, local: LocalRay | None = None
) -> None:
    """Join ``settings.ray_address`` or start the embedded Ray (``local``: token-authenticated, on
    loopback, private session folder, see ``local_ray``); refuse,
    at once and in one line, a cluster with fewer GPUs than the run asks for (Ray would wait for them
    for ever), unless the run is on the CPU (``--device cpu``)."""
    import ray  # lazy: Ray reads its settings at import, after prepare_environment (main)

    device = DEVICES[settings.device]
    options: dict[str, Any] = {"address": settings.ray_address, "runtime_env": ray_runtime_env(settings)}
    if local is not None:  # main builds one only without --address
        options.update(local.init_options())
    options.update(device.ray_options(settings.ray_address))
    ray.init(**options)
    if not device.uses_gpus:
        return
    have = int(ray.cluster_resources().get("GPU", 0))
    needed = gpus_needed(openrlhf_argv) if openrlhf_argv is not None else 1
    if have < max(needed, 1):
        ray.shutdown()
        where = f"the Ray cluster at {settings.ray_address}" if settings.ray_address else "this machine"
        if have < 1:
            raise SystemExit(f"infoppo: no GPU in {where}; OpenRLHF's PPO trainer needs CUDA GPUs")
        raise SystemExit(
            f"infoppo: the run needs {needed} GPUs and {where} has {have}; lower --nodes/--gpus-per-node"
        )


def install(settings: InfoSettings) -> None:
    """Make OpenRLHF's ``train()`` build infoppo's actors and see ``args.infotime`` (this process)."""
    import openrlhf.trainer.ppo_trainer as trainer_module  # lazy: after prepare_launch's stand-ins (main)
    import openrlhf.trainer.ray.ppo_actor as actor_module  # lazy: after prepare_launch's stand-ins (main)
    import openrlhf.trainer.ray.ppo_critic as critic_module  # lazy: after prepare_launch's stand-ins (main)
    import openrlhf.utils.config as config_module  # lazy: after prepare_launch's stand-ins (main)

    from infoppo_cli.openrlhf_adapter import actors  # lazy: imports openrlhf, after prepare_launch (main)

    # every method: its old-policy entropy is logged, and its HF checkpoints are rotated
    actor_module.PolicyModelActor = actors.InfoPolicyModelActor  # read by train_ppo_ray's module-level import
    critic_module.CriticModelActor = actors.InfoCriticModelActor  # likewise
    trainer_module.PPOTrainer = actors.InfoPPOTrainer  # imported inside train() at call time
    upstream = config_module.hierarchize
    if getattr(upstream, "_infoppo", False):
        return

    def hierarchize(flat_args):
        tree = upstream(flat_args)
        if tree.train.async_enable:
            raise SystemExit("infoppo: OpenRLHF's async mode (--train.async_enable) is not supported")
        tree.infotime = settings.as_namespace()
        return tree

    hierarchize._infoppo = True  # type: ignore[attr-defined]
    config_module.hierarchize = hierarchize


def check_cluster_storage(settings: InfoSettings, openrlhf_argv: list[str]) -> None:
    """With ``--address``: refuse to start unless every node sees the output directory and the
    local paths the workers open (``cluster.py``); nothing to check on an embedded local Ray."""
    if not settings.ray_address or not settings.metrics_path:
        return
    from infoppo_cli.openrlhf_adapter import cluster  # lazy: imports ray, after prepare_environment (main)

    parsed, _ = openrlhf_parser().parse_known_args(openrlhf_argv)
    misses = cluster.unshared_paths(Path(settings.metrics_path).parent, cluster.local_paths(parsed))
    if misses:
        raise SystemExit(cluster.refusal(misses))


def configured(argv: list[str]) -> tuple[Any, list[str]]:
    """The run's settings from the configuration ``--config PATH`` names (the path is then this
    process's ``$INFOPPO_RUN_CONFIG``, which the reward reads), and OpenRLHF's flags, the rest."""
    if len(argv) < 2 or argv[0] != "--config":
        raise SystemExit(
            "infoppo: the launcher takes --config RUN/config.json first (`infoppo train` writes it)"
        )
    try:
        settings = read_run_config(argv[1])
    except ValueError as exc:
        raise SystemExit(f"infoppo: {exc}") from None
    os.environ[CONFIG_ENV] = str(Path(argv[1]).resolve())
    return settings, list(argv[2:])


def main(argv: list[str] | None = None) -> None:
    """Run OpenRLHF's PPO trainer with infoppo's settings from ``argv``."""
    settings, openrlhf_argv = configured(sys.argv[1:] if argv is None else argv)
    require_openrlhf()
    device = DEVICES[settings.device]
    device.prepare_launch()
    run_dir = Path(settings.metrics_path).parent if settings.metrics_path else None
    local = None if settings.ray_address else LocalRay(run_dir, settings.keep_ray_logs)
    stop_run_on_owner_death(run_dir, local.close if local is not None else lambda: None)
    if local is not None:
        local.prepare_environment()
    import ray  # lazy: Ray reads its settings at import, after prepare_environment

    try:
        start_ray(settings, openrlhf_argv, local)
        check_cluster_storage(settings, openrlhf_argv)
        install(settings)
        device.prepare_trainer()
        sys.argv = [ENTRY_MODULE, *openrlhf_argv]
        runpy.run_module(ENTRY_MODULE, run_name="__main__", alter_sys=True)
    except KeyboardInterrupt:
        print("infoppo: interrupted, stopping the Ray workers", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        ray.shutdown()
        if local is not None:
            local.close()


if __name__ == "__main__":
    main()
