"""DeepSpeed on the CPU: OpenRLHF's own ``DeepspeedStrategy`` and DeepSpeed's engine, unchanged.

DeepSpeed 0.19 runs on its CPU accelerator (``DS_ACCELERATOR=cpu``, gloo as the collective backend):
ZeRO stage 2, bf16 with fp32 master weights, gradient accumulation (the optimizer and the scheduler
step once per accumulation boundary, as on GPUs), its AdamW (FusedAdam's CPU build, compiled by
DeepSpeed on first use and cached in ``~/.cache/torch_extensions``), gradient clipping at the model's
``max_norm``, and checkpoints in its own layout (``latest``, ``global_stepN/*_model_states.pt``,
``*_optim_states.pt``, ``zero_to_fp32.py``) that ``--resume`` continues from.

The one call of the strategy that cannot run without CUDA is its device mesh,
``init_device_mesh("cuda", ...)`` in ``DeepspeedStrategy.setup_distributed``: in a CPU worker,
:func:`run_deepspeed_on_cpu` rebinds that module's ``init_device_mesh`` to :func:`cpu_device_mesh`
(the same mesh on the CPU, over gloo). OpenRLHF's other direct ``torch.cuda`` calls are
``torch_device``'s. Both are listed in ``patches.PATCHES`` and pinned by
``tests/openrlhf_adapter/cpu/test_strategy.py``.
"""

from __future__ import annotations

import os
from typing import Any

ACCELERATOR_ENV = "DS_ACCELERATOR"
"""DeepSpeed picks its accelerator from this variable when it is first asked (``cpu`` here)."""


def cpu_device_mesh(device_type: str, mesh_shape: tuple[int, ...], **kwargs: Any):
    """``init_device_mesh`` with the mesh on the CPU whatever ``device_type`` the caller names."""
    from torch.distributed.device_mesh import init_device_mesh  # lazy: heavy, kept off start-up

    return init_device_mesh("cpu", mesh_shape, **kwargs)


def run_deepspeed_on_cpu() -> None:
    """In this process: DeepSpeed's CPU accelerator, and OpenRLHF's strategy building its device mesh
    on the CPU (idempotent). Raises if DeepSpeed already chose another accelerator."""
    os.environ[ACCELERATOR_ENV] = "cpu"
    from deepspeed.accelerator import get_accelerator  # lazy: after DS_ACCELERATOR is set

    name = get_accelerator().device_name()
    if name != "cpu":
        raise RuntimeError(
            f"DeepSpeed chose the {name!r} accelerator in a CPU worker; set {ACCELERATOR_ENV}=cpu"
        )
    import openrlhf.utils.deepspeed.deepspeed as strategy_module  # lazy: after DS_ACCELERATOR is set

    strategy_module.init_device_mesh = cpu_device_mesh
