"""OpenRLHF's direct ``torch.cuda`` calls, pointed at the CPU in a CPU worker process.

Outside its strategy, OpenRLHF 0.11.2 calls ``torch.cuda`` itself in a few places: the workers'
``forward`` and ``fit`` (``current_device``, ``empty_cache``, ``synchronize``), the replay buffer
(``cuda:{current_device()}``) and ``torch_dist_barrier_and_cuda_sync``. In a CPU run's worker
processes (never in a GPU run) :func:`run_cuda_calls_on_cpu` makes them address the CPU.
"""

from __future__ import annotations

import os

import torch

CPU = "cpu"


def _no_op(name: str):
    """A distinct do-nothing function per replaced name: torch's compiler keys its rules by function
    object and refuses one object registered under two names."""

    def no_op(*args, **kwargs) -> None:
        return None

    no_op.__name__ = no_op.__qualname__ = f"cpu_{name}"
    return no_op


def run_cuda_calls_on_cpu(threads: int | None = None) -> None:
    """Point this process's ``torch.cuda`` calls and OpenRLHF's replay buffers at the CPU
    (idempotent), and let torch use ``threads`` threads (default: Ray's share for this worker)."""
    torch.cuda.current_device = lambda: CPU
    for name in ("synchronize", "empty_cache", "set_device"):
        setattr(torch.cuda, name, _no_op(name))
    if threads:
        torch.set_num_threads(threads)
    _cpu_replay_buffers()


def _cpu_replay_buffers() -> None:
    import openrlhf.trainer.ray.ppo_actor as ppo_actor
    import openrlhf.trainer.ray.ppo_critic as ppo_critic
    from openrlhf.trainer.ppo_utils.replay_buffer import NaiveReplayBuffer

    if getattr(ppo_actor.NaiveReplayBuffer, "_infoppo_cpu", False):
        return

    class CpuReplayBuffer(NaiveReplayBuffer):
        """Upstream's buffer, whose device is formatted as ``cuda:{index}``, kept on the CPU."""

        _infoppo_cpu = True

        def __init__(self, *args, **kwargs):
            current = torch.cuda.current_device
            torch.cuda.current_device = lambda: 0  # only for the device string built in __init__
            try:
                super().__init__(*args, **kwargs)
            finally:
                torch.cuda.current_device = current
            self.target_device = torch.device(CPU)

    ppo_actor.NaiveReplayBuffer = ppo_critic.NaiveReplayBuffer = CpuReplayBuffer


def cpu_threads() -> int:
    """Threads for the process that runs alone in its phase of a synchronous RL step (the rollout
    engine): every core but one, which the grading workers and Ray's own processes use meanwhile.
    Oversubscribed cores slow torch down several times over (measured on 2 cores: a training step
    took 0.8 s with 2 threads under load, 0.1 s with 1)."""
    return max((os.cpu_count() or 1) - 1, 1)
