"""Import stand-ins for the two packages a CPU machine cannot install and OpenRLHF imports anyway.

vLLM ships CUDA wheels only; flash-attn's CUDA extension needs nvcc. OpenRLHF 0.11.2 imports both at
module level (``trainer/ray/vllm_engine.py``, ``models/ring_attn_utils.py``). When, and only when,
the real ones are missing, :func:`install` registers minimal modules with the names those imports
read. Nothing generates through them: engine classes raise on construction, and ``SamplingParams``
only records the sampling options (with vLLM's names and defaults) that infoppo's CPU rollout engine
reads. A real vLLM always wins.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
import uuid
from dataclasses import dataclass
from typing import Any

UNAVAILABLE = "vLLM is not installed on this CPU-only machine: a --device cpu run generates with transformers"


class _Unavailable:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(UNAVAILABLE)


@dataclass
class SamplingParams:
    """The sampling options of vLLM 0.29's ``SamplingParams`` that OpenRLHF sets or the CPU engine
    reads, with vLLM's defaults; any other keyword is a ``TypeError``, as with vLLM's own class."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    stop: list[str] | None = None
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False
    max_tokens: int | None = 16
    min_tokens: int = 0
    logprobs: int | None = None
    skip_special_tokens: bool = True
    include_stop_str_in_output: bool = False


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    module.__path__ = []
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__file__ = f"<infoppo import stand-in for {name}>"
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


def _install_flash_attn() -> None:
    if "flash_attn_2_cuda" in sys.modules or importlib.util.find_spec("flash_attn") is None:
        return  # extension present, or flash-attn absent (its import then fails as it would anyway)
    try:
        import flash_attn_2_cuda  # noqa: F401
    except ImportError:  # the Python part without the CUDA kernels (scripts/install.sh on CPU)
        sys.modules["flash_attn_2_cuda"] = types.ModuleType("flash_attn_2_cuda")


def _install_vllm() -> None:
    if "vllm" in sys.modules:
        return
    try:
        import vllm  # noqa: F401

        return
    except ImportError:
        pass
    _module(
        "vllm",
        __version__="0.29.0",
        SamplingParams=SamplingParams,
        LLM=_Unavailable,
        AsyncEngineArgs=_Unavailable,
        AsyncLLMEngine=_Unavailable,
    )
    _module("vllm.inputs", TokensPrompt=dict)
    _module("vllm.utils", random_uuid=lambda: uuid.uuid4().hex)
    _module("vllm.distributed")
    _module("vllm.distributed.utils", StatelessProcessGroup=_Unavailable)
    _module("vllm.distributed.device_communicators")
    _module("vllm.distributed.device_communicators.pynccl", PyNcclCommunicator=_Unavailable)


def install() -> None:
    """Register the stand-ins OpenRLHF's imports need on this machine (idempotent; a Ray
    ``worker_process_setup_hook`` in every worker of a CPU run)."""
    _install_flash_attn()
    _install_vllm()
