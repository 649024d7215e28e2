"""The install: where the data directories (``presets/``, ``evaluation/``) live, and which versions of
the packages infoppo integrates with are installed (and the check that refuses any other OpenRLHF)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

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


def stack_versions() -> dict[str, str | None]:
    """Versions of the packages a run's results depend on, for manifests and metrics files."""
    from infoppo_cli import __version__

    names = ["openrlhf", "torch", "vllm", "deepspeed", "ray", "transformers", "math-verify"]
    names += ["latex2sympy2_extended"]
    return {"infoppo": __version__, **{name: installed_version(name) for name in names}}
