"""Import stand-ins for the two packages that cannot be installed on a CPU machine.

vLLM ships only CUDA wheels and flash-attn's CUDA extension needs nvcc; OpenRLHF imports both at
module level. When (and only when) the real ones are missing, minimal modules with the names
OpenRLHF touches at import time are registered. Engine classes raise if anything constructs them.
Everything else (openrlhf, deepspeed, ray, transformers, math-verify) is the real package.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types

UNAVAILABLE = "vLLM is not available on this CPU-only install (import stand-in from infoppo's tests)"


class _Unavailable:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(UNAVAILABLE)


class _SamplingParams:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


def _module(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    mod.__path__ = []
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    mod.__file__ = f"<infoppo import stand-in for {name}>"
    sys.modules[name] = mod
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, mod)
    return mod


def _install_flash_attn() -> None:
    if "flash_attn_2_cuda" in sys.modules:
        return
    if importlib.util.find_spec("flash_attn") is not None:
        # flash-attn's Python part is installed; only the compiled CUDA extension is missing.
        try:
            import flash_attn_2_cuda  # noqa: F401
        except ImportError:
            sys.modules["flash_attn_2_cuda"] = types.ModuleType("flash_attn_2_cuda")
        return
    raise RuntimeError("flash-attn's Python package is missing: run scripts/install.sh")


def _install_vllm() -> None:
    try:
        import vllm  # noqa: F401  (a real vLLM always wins)

        return
    except ImportError:
        pass
    _module(
        "vllm",
        __version__="0.29.0",
        SamplingParams=_SamplingParams,
        LLM=_Unavailable,
        AsyncEngineArgs=_Unavailable,
        AsyncLLMEngine=_Unavailable,
    )
    _module("vllm.inputs", TokensPrompt=dict)
    _module("vllm.utils", random_uuid=lambda: "stand-in-uuid")
    _module("vllm.distributed")
    _module("vllm.distributed.utils", StatelessProcessGroup=_Unavailable)
    _module("vllm.distributed.device_communicators")
    _module("vllm.distributed.device_communicators.pynccl", PyNcclCommunicator=_Unavailable)


def install() -> None:
    """Register the stand-ins needed for OpenRLHF to import on this machine (idempotent)."""
    _install_flash_attn()
    _install_vllm()
