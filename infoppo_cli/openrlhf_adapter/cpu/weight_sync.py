"""The weight sync of a CPU run: OpenRLHF's own broadcast from the actor to the vLLM engines, over gloo.

After every RL step upstream's ``PolicyModelActor.broadcast_to_vllm`` sends each parameter from the
actor's rank 0 to every engine: it asks each engine to ``update_weight(name, dtype, shape)`` (vLLM's
``collective_rpc`` into its worker, upstream's ``WorkerWrap``) and broadcasts the tensor over a process
group opened once by ``_init_vllm_sync_group`` (actor) and ``WorkerWrap.init_process_group`` (engine).
On GPUs that group is a ``PyNcclCommunicator`` and the receive buffer is allocated on ``cuda``; neither
exists on a CPU. What is replaced (each a row of ``openrlhf_adapter.patches.PATCHES``):

* the group: :func:`gloo_sync_group`, with the signature of upstream's ``stateless_init_process_group``,
  opens a gloo group of its own (a TCP store and ``ProcessGroupGloo``) that leaves the process's
  default group alone (DeepSpeed's in the actor, vLLM's in the engine); bound in the actor's trainer
  module, and in the engine's worker by :class:`CpuWorkerWrap` before upstream's ``init_process_group``;
* the receive: :meth:`CpuWorkerWrap.update_weight` allocates its buffer on the worker's device, and
  loads the step's weights through vLLM's own reload once all have arrived.

Everything else is upstream's: which parameters, their order, names, dtypes, the prefix-cache reset.
After every sync the actor checks that each engine loaded exactly the weights it trained
(:func:`parameter_checksum` against :meth:`CpuWorkerWrap.loaded_checksum`, in
``workers.CpuPolicyModelActor.broadcast_to_vllm``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import openrlhf.utils.distributed_util as distributed_util
import torch
from openrlhf.trainer.ray.vllm_worker_wrap import WorkerWrap
from torch.distributed import BroadcastOptions, PrefixStore, ProcessGroupGloo, TCPStore

SYNC_TIMEOUT = timedelta(minutes=5)
"""How long a rank of the sync group waits for the others (joining, and each broadcast) before the
run fails: a dead or stuck engine stops the run instead of leaving it training on stale weights."""
WORKER_EXTENSION = f"{__name__}.CpuWorkerWrap"
"""The ``worker_extension_cls`` a CPU engine gives vLLM (upstream's names ``WorkerWrap``)."""


class GlooBroadcastGroup:
    """A gloo process group between the actor's rank 0 (rank 0 here) and the engines, with the
    ``broadcast(tensor, src, stream)`` upstream calls on its NCCL communicator (``stream`` is CUDA's;
    there is none on a CPU)."""

    def __init__(self, master_address: str, master_port: int, rank: int, world_size: int) -> None:
        store = TCPStore(
            master_address, int(master_port), world_size, is_master=rank == 0, timeout=SYNC_TIMEOUT
        )
        self.rank = rank
        self.world_size = world_size
        self.group = ProcessGroupGloo(
            PrefixStore("infoppo-weight-sync", store), rank, world_size, SYNC_TIMEOUT
        )
        self._store = store  # the group reads it while it lives

    def broadcast(self, tensor: torch.Tensor, src: int = 0, stream: Any = None) -> None:
        options = BroadcastOptions()
        options.rootRank = src
        options.rootTensor = 0
        self.group.broadcast([tensor], options).wait()


def gloo_sync_group(master_address: str, master_port: int, rank: int, world_size: int, device: Any = None):
    """Upstream's ``stateless_init_process_group`` on a CPU: the sync group over gloo."""
    return GlooBroadcastGroup(master_address, master_port, rank, world_size)


Checksum = tuple[float, float]


def tensors_checksum(tensors: Iterable[torch.Tensor]) -> Checksum:
    """``(sum, sum of squares)`` of every value, in float64."""
    total = squares = 0.0
    for tensor in tensors:
        values = tensor.detach().to(torch.float64)
        total += float(values.sum())
        squares += float((values * values).sum())
    return total, squares


def parameter_checksum(model: torch.nn.Module) -> Checksum:
    """The checksum of what the weight sync sends: every parameter of the actor's model (a tied
    embedding once), in the checkpoint's layout."""
    return tensors_checksum(param for _, param in model.named_parameters())


class CpuWorkerWrap(WorkerWrap):
    """Upstream's vLLM worker extension, receiving the weights on the CPU."""

    def init_process_group(self, *args: Any, **kwargs: Any) -> None:
        # upstream's init_process_group imports stateless_init_process_group at call time
        distributed_util.stateless_init_process_group = gloo_sync_group
        super().init_process_group(*args, **kwargs)

    def update_weight(self, name, dtype, shape, empty_cache=False):
        """Receive one parameter from the actor's broadcast into a buffer on the worker's device
        (upstream's is on ``cuda``); once the last one is in (upstream flags it with ``empty_cache``),
        load them all through vLLM's weight reload, which repacks the CPU kernels' layouts as loading
        from disk does (loading into a repacked layer one tensor at a time, as upstream does on GPUs,
        fails on the CPU)."""
        if dtype != self.model_config.dtype:
            raise ValueError(f"weight {name} arrives as {dtype}; the engine holds {self.model_config.dtype}")
        weight = torch.empty(shape, dtype=dtype, device=self.device)
        self._model_update_group.broadcast(weight, src=0)
        received = self.__dict__.setdefault("_received_weights", [])
        received.append((name, weight))
        if empty_cache:
            self.model_runner.reload_weights(weights_iterator=iter(received))
            self._loaded_checksum = tensors_checksum(tensor for _, tensor in received)
            received.clear()

    def loaded_checksum(self) -> Checksum | None:
        """The checksum of the weights this worker last loaded from the actor (``None`` before the
        first sync). vLLM's CPU kernels repack linear weights into opaque buffers, so what it holds
        cannot be read back; this is taken from the very tensors handed to its reload."""
        return getattr(self, "_loaded_checksum", None)
