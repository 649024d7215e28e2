"""OpenRLHF's own ``torch.cuda`` calls, answered on the CPU in a CPU run's worker processes.

What is replaced, and why: besides its strategy's device mesh (``strategy``), OpenRLHF 0.11.2 calls
``torch.cuda`` itself in the code a CPU worker runs: ``current_device`` (the device its workers move
batches to), ``synchronize`` and ``empty_cache`` (after training), ``set_device`` (the strategy's set-up),
``current_stream`` (the stream the weight sync broadcasts on),
and its replay buffer names its device ``cuda:{current_device()}``. Without CUDA each of these fails.

* :func:`answer_cuda_calls_on_cpu` rebinds the five ``torch.cuda`` functions: ``current_device``
  answers ``"cpu"``, the others do nothing;
* :func:`keep_replay_buffers_on_cpu` rebinds the replay buffer's name in the actor's and the critic's
  trainer modules to :class:`CpuReplayBuffer`.

:func:`run_cuda_calls_on_cpu` does both, in the worker processes of a CPU run only (never in a GPU run's,
nor in the driver). Each rebinding is a row of ``openrlhf_adapter.patches.PATCHES``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from openrlhf.trainer.ppo_utils.replay_buffer import NaiveReplayBuffer

CPU = "cpu"


def cpu_current_device() -> str:
    """``torch.cuda.current_device`` in a CPU worker: the device OpenRLHF moves its tensors to."""
    return CPU


def _does_nothing(name: str) -> Callable[..., None]:
    """A do-nothing stand-in for ``torch.cuda.<name>``: a distinct function per name, since torch's
    compiler keys its rules by function object and refuses one object registered under two names."""

    def stand_in(*args, **kwargs) -> None:
        return None

    stand_in.__name__ = stand_in.__qualname__ = f"cpu_{name}"
    return stand_in


def answer_cuda_calls_on_cpu() -> None:
    """Rebind the ``torch.cuda`` functions OpenRLHF's workers call (this process; idempotent)."""
    torch.cuda.current_device = cpu_current_device
    torch.cuda.synchronize = _does_nothing("synchronize")
    torch.cuda.empty_cache = _does_nothing("empty_cache")
    torch.cuda.set_device = _does_nothing("set_device")
    torch.cuda.current_stream = _does_nothing("current_stream")  # the weight sync names CUDA's stream


@contextmanager
def _cuda_index_as_current_device() -> Iterator[None]:
    """While upstream's replay buffer is built: ``torch.cuda.current_device`` answers the index 0, as
    on a GPU, since the buffer formats ``cuda:{current_device()}`` into its device name and the CPU's
    answer would make ``cuda:cpu``, which is no device. The CPU's answer is back afterwards, also when
    building fails."""
    answer = torch.cuda.current_device
    torch.cuda.current_device = lambda: 0
    try:
        yield
    finally:
        torch.cuda.current_device = answer


class CpuReplayBuffer(NaiveReplayBuffer):
    """Upstream's replay buffer, built as on a GPU, with its experiences kept on the CPU."""

    def __init__(self, *args, **kwargs) -> None:
        with _cuda_index_as_current_device():
            super().__init__(*args, **kwargs)
        self.target_device = torch.device(CPU)


def keep_replay_buffers_on_cpu() -> None:
    """Make the actor's and the critic's trainers build :class:`CpuReplayBuffer` (this process)."""
    import openrlhf.trainer.ray.ppo_actor as ppo_actor  # lazy: DeepSpeed, kept out of the vLLM engines
    import openrlhf.trainer.ray.ppo_critic as ppo_critic  # lazy: DeepSpeed, kept out of the vLLM engines

    ppo_actor.NaiveReplayBuffer = CpuReplayBuffer
    ppo_critic.NaiveReplayBuffer = CpuReplayBuffer


def run_cuda_calls_on_cpu() -> None:
    """Point this worker process's CUDA calls and OpenRLHF's replay buffers at the CPU (idempotent)."""
    answer_cuda_calls_on_cpu()
    keep_replay_buffers_on_cpu()


def cpu_threads() -> int:
    """Threads for the process that runs alone in its phase of a synchronous RL step (the rollout
    engine): every core but one, which the grading workers and Ray's own processes use meanwhile.
    Oversubscribed cores slow torch down several times over (measured on 2 cores: a training step
    took 0.8 s with 2 threads under load, 0.1 s with 1)."""
    return max((os.cpu_count() or 1) - 1, 1)
