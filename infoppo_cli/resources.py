"""Where the data directories (``presets/``, ``evaluation/``) live in a checkout and in a wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The ``presets`` or ``evaluation`` directory: beside the package in a checkout or editable
    install, inside it (``infoppo_cli/<name>``) in a built wheel."""
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"infoppo's {name}/ directory is missing from this install")
