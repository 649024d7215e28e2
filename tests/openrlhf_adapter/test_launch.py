"""The entry point: infoppo's classes are what OpenRLHF's train() builds; settings reach args."""

from __future__ import annotations

import argparse
import os
import runpy
import signal
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from openrlhf_fixtures import method_settings

from infoppo_cli.openrlhf_adapter.launch import ENTRY_MODULE, configured, install, ray_runtime_env
from infoppo_cli.openrlhf_adapter.settings import (
    CONFIG_ENV,
    CONFIG_FILE,
    InfoSettings,
    read_run_config,
    write_run_config,
)


@pytest.fixture
def restore_openrlhf(monkeypatch):
    """install() rebinds module attributes of OpenRLHF; put them back after each test."""
    import openrlhf.trainer.ppo_trainer as trainer_module
    import openrlhf.trainer.ray.ppo_actor as actor_module
    import openrlhf.utils.config as config_module

    monkeypatch.setattr(actor_module, "PolicyModelActor", actor_module.PolicyModelActor)
    monkeypatch.setattr(trainer_module, "PPOTrainer", trainer_module.PPOTrainer)
    monkeypatch.setattr(config_module, "hierarchize", config_module.hierarchize)


def entry_module_globals() -> dict:
    """Execute train_ppo_ray's module body (not its __main__ block), as the real launch does first."""
    return runpy.run_module(ENTRY_MODULE, run_name="infoppo_probe")


def test_the_launcher_reads_the_run_s_configuration_and_passes_the_rest_to_openrlhf(tmp_path, monkeypatch):
    monkeypatch.setenv(CONFIG_ENV, "")  # restored after the test: the launcher sets it for its process
    ours = method_settings("dapo-ft", eps_low_info=5.0, metrics_path="/tmp/m.jsonl", eval_before=True)
    config = tmp_path / CONFIG_FILE
    write_run_config(config, asdict(ours))  # as the plan does
    settings, rest = configured(["--config", str(config), "--actor.adam.lr", "1e-6", "--x"])
    assert settings == ours and settings.norm is None  # no paper default fills what the plan left out
    assert rest == ["--actor.adam.lr", "1e-6", "--x"]
    assert os.environ[CONFIG_ENV] == str(config)  # where the reward reads it
    with pytest.raises(SystemExit, match="--config"):
        configured(["--actor.adam.lr", "1e-6"])
    config.write_text('{"schema": 1, "infotime": {"method": "dapo-ft"}}')  # the plan always gives the parts
    with pytest.raises(SystemExit, match=f"cannot read the run configuration {config}"):
        configured(["--config", str(config)])
    with pytest.raises(ValueError, match="unknown reward 'bogus'"):
        write_run_config(config, {**asdict(ours), "reward": "bogus"}) or read_run_config(config)


@pytest.mark.parametrize("method", ["infoppo", "ppo", "dapo", "dapo-ft"])
def test_train_builds_infoppo_actor_and_trainer(method, restore_openrlhf):
    """Every method gets infoppo's actor worker: the same metrics and checkpoint rotation for all."""
    from openrlhf.trainer.ray.launcher import RayActorGroup

    from infoppo_cli.openrlhf_adapter.actors import InfoPolicyModelActor, InfoPPOTrainer

    install(method_settings(method))
    module = entry_module_globals()
    assert module["PolicyModelActor"] is InfoPolicyModelActor  # what train() hands to RayActorGroup
    assert module["RayActorGroup"] is RayActorGroup
    from openrlhf.trainer.ppo_trainer import PPOTrainer  # train() imports it at call time

    assert PPOTrainer is InfoPPOTrainer
    upstream_actor = InfoPolicyModelActor.__ray_actor_class__.__mro__[1]
    assert (
        upstream_actor.__name__ == "PolicyModelActor"
        and upstream_actor.__module__ == "openrlhf.trainer.ray.ppo_actor"
    )


def test_hierarchize_attaches_settings_and_refuses_async(restore_openrlhf):
    from infoppo_cli.openrlhf_adapter.flags import openrlhf_parser

    settings = method_settings("infoppo", norm="sentence", metrics_path="/tmp/m.jsonl")
    install(settings)
    from openrlhf.utils.config import hierarchize  # as the CLI's __main__ block imports it

    args = hierarchize(openrlhf_parser().parse_args([]))
    assert InfoSettings.from_args(args) == settings
    flat = openrlhf_parser().parse_args(["--train.async_enable"])
    with pytest.raises(SystemExit, match="async"):
        hierarchize(flat)
    assert isinstance(flat, argparse.Namespace)


def test_a_cluster_s_workers_get_infoppo_train_s_bar_setting(monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert "TQDM_DISABLE" not in ray_runtime_env(method_settings(ray_address="auto"))["env_vars"]
    monkeypatch.setenv("TQDM_DISABLE", "1")  # what `infoppo train` gives the launcher (train/output.py)
    assert ray_runtime_env(method_settings(ray_address="auto"))["env_vars"]["TQDM_DISABLE"] == "1"


def written_config(directory: Path) -> str:
    """A run configuration, as the plan writes it."""
    path = directory / CONFIG_FILE
    write_run_config(path, asdict(method_settings()))
    return str(path)


def test_runtime_env_carries_openrlhf_defaults_and_ships_infoppo_to_a_cluster(monkeypatch, tmp_path):
    config = written_config(tmp_path)
    monkeypatch.setenv(CONFIG_ENV, config)  # set by the launcher from its --config
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    local = ray_runtime_env(method_settings(reward="signed"))
    assert local["env_vars"][CONFIG_ENV] == config  # the reward reads its style there
    assert local["env_vars"]["RAY_ENABLE_ZERO_COPY_TORCH_TENSORS"] == "1" and "py_modules" not in local
    assert local["worker_process_setup_hook"] == "infoppo_cli.openrlhf_adapter.worker_setup.gpu_worker"
    cpu = ray_runtime_env(method_settings(device="cpu"))
    assert cpu["worker_process_setup_hook"] == "infoppo_cli.openrlhf_adapter.worker_setup.cpu_worker"
    remote = ray_runtime_env(method_settings(ray_address="ray://head:10001"))
    assert remote["py_modules"][0].__name__ == "infoppo_cli"
    assert "WANDB_API_KEY" not in remote["env_vars"]
    monkeypatch.setenv("WANDB_API_KEY", "sekret-1234")  # Ray logs a runtime environment: never in it
    for settings in (method_settings(ray_address="auto"), method_settings(device="cpu"), method_settings()):
        assert "sekret-1234" not in repr(ray_runtime_env(settings))


def test_only_the_infoppo_variables_the_workers_read_reach_ray(monkeypatch, tmp_path):
    """Ray writes its runtime environment, every value, to the session's runtime_env_agent.log: a
    blanket copy of ``INFOPPO_*`` put the caller's cache path and sweep settings there."""
    import inspect
    import re

    from infoppo_cli.openrlhf_adapter import reward_func, settings

    monkeypatch.setenv("INFOPPO_REWARD_TIMEOUT", "5")
    monkeypatch.setenv("INFOPPO_REWARD_WORKERS", "2")
    monkeypatch.setenv("INFOPPO_CACHE", "/home/someone/private-cache")
    monkeypatch.setenv("INFOPPO_SWEEP_EXECUTABLE", "/opt/sweep")
    config = written_config(tmp_path)
    monkeypatch.setenv(CONFIG_ENV, config)
    for runtime in (method_settings(ray_address="auto"), method_settings(device="cpu"), method_settings()):
        env = ray_runtime_env(runtime)["env_vars"]
        ours = {key: value for key, value in env.items() if key.startswith("INFOPPO_")}
        assert ours == {
            "INFOPPO_REWARD_TIMEOUT": "5",
            "INFOPPO_REWARD_WORKERS": "2",
            CONFIG_ENV: config,
        }
    read_in_workers = re.findall(
        r'"(INFOPPO_\w+)"', inspect.getsource(reward_func) + inspect.getsource(settings)
    )
    assert set(read_in_workers) == set(ours)  # what the workers read, and nothing else


@pytest.mark.parametrize("method", ["infoppo", "dapo-ft"])
@pytest.mark.slow
def test_the_planned_command_starts_and_stops_cleanly_without_gpu(method, tmp_path):
    """`infoppo train`'s exact command: every flag is accepted, Ray starts, no GPU is found."""
    from infoppo_cli.train.plan import TrainRequest, plan_training

    request = TrainRequest(preset="qwen3-4b", method=method, output_dir=str(tmp_path / "run"))
    plan = plan_training(request, strict_data=False)
    plan.write_config()
    env = {"RAY_USAGE_STATS_ENABLED": "0", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(plan.command(), capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode != 0
    assert "infoppo: no GPU in this machine" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("flags", "needed"),
    [
        (["--actor.num_gpus_per_node", "8", "--train.colocate_all", "--vllm.num_engines", "8"], 8),
        (["--actor.num_gpus_per_node", "2", "--vllm.num_engines", "2"], 4),
        (
            [
                "--actor.num_gpus_per_node",
                "2",
                "--critic.num_gpus_per_node",
                "2",
                "--vllm.num_engines",
                "1",
                "--critic.model_name_or_path",
                "m",
            ],
            5,
        ),
        (
            ["--actor.num_gpus_per_node", "2", "--ref.num_gpus_per_node", "2", "--algo.kl.init_coef", "0.01"],
            4,
        ),
    ],
)
def test_the_gpus_a_run_asks_for_are_counted_before_ray_waits_for_them(flags, needed):
    """``start_ray`` refuses at once a cluster with fewer GPUs than this count (Ray would wait for ever)."""
    from infoppo_cli.openrlhf_adapter.launch import gpus_needed

    argv = [
        "--actor.model_name_or_path",
        "m",
        "--critic.num_gpus_per_node",
        "8",
        "--ref.num_gpus_per_node",
        "8",
    ]
    argv += ["--algo.kl.init_coef", "0"] if "--algo.kl.init_coef" not in flags else []
    assert gpus_needed([*argv, *flags]) == needed


def test_the_embedded_ray_is_kept_on_loopback_without_a_metrics_exporter(monkeypatch, tmp_path):
    """Ray 2.55 turns ``_node_ip_address="127.0.0.1"`` into the machine's address, and its Prometheus
    exporters then answered on every interface; its single-machine switch keeps the node on loopback."""
    from infoppo_cli.openrlhf_adapter.local_ray import LocalRay

    for name in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_enable_metrics_collection", "RAY_AUTH_MODE"):
        monkeypatch.setenv(name, "1")  # restored after the test; overridden by the embedded Ray's
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    LocalRay.prepare_environment()
    assert os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert os.environ["RAY_enable_metrics_collection"] == "0"  # noqa: SIM112 (Ray spells it so)
    assert os.environ["RAY_AUTH_MODE"] == "token" and len(os.environ["RAY_AUTH_TOKEN"]) == 64


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_at_start_up_leaves_no_ray_session_folder(signum, tmp_path):
    """Python's default for SIGTERM ends the process before any ``finally``: the private session folder
    made at start-up was left in /tmp."""
    script = (
        "import sys, time\n"
        "from infoppo_cli.openrlhf_adapter.local_ray import LocalRay\n"
        "local = LocalRay(None)\n"
        "print(local.session_root, flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    folder = Path(child.stdout.readline().strip())
    assert folder.is_dir() and folder.name.startswith("infoppo-ray-")
    child.send_signal(signum)
    assert child.wait(timeout=30) == 128 + signum
    assert not folder.exists()
