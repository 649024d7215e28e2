"""The run configuration `infoppo train` writes, for tests that call the reward outside a run."""

from __future__ import annotations

from pathlib import Path

from infoppo_cli.openrlhf_adapter.settings import CONFIG_FILE, write_run_config


def run_config(directory: Path, method: str) -> str:
    """The configuration `infoppo train` writes for a run of the shipped ``method``; its path."""
    from infoppo_cli.train.methods import method as shipped

    chosen = shipped(method)
    path = directory / CONFIG_FILE
    write_run_config(path, {"method": method, **chosen.components(), **chosen.infotime})
    return str(path)
