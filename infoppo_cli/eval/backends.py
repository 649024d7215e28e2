"""Choosing and loading a generation backend by name: the one module that knows both of them."""

from __future__ import annotations

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.generation import BACKENDS, HF_BATCH_SIZE, Backend, check_model_reference
from infoppo_cli.eval.hf_backend import HFBackend
from infoppo_cli.eval.vllm_backend import VLLMBackend


def load_backend(
    name: str,
    model: str,
    *,
    tensor_parallel: int = 1,
    seed: int = 0,
    batch_size: int = HF_BATCH_SIZE,
) -> Backend:
    """Load ``model`` into the named backend (``"vllm"`` or ``"hf"``); each backend's heavy packages
    (vllm, torch, transformers) are imported only when it is chosen."""
    check_model_reference(model)
    if name == "vllm":
        return VLLMBackend(model, tensor_parallel=tensor_parallel, seed=seed)
    if name == "hf":
        return HFBackend(model, batch_size=batch_size)
    raise UsageError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
