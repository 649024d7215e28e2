"""A machine with no network and nothing in the Hugging Face caches, for the test's duration: the Hub's
probe fails, the Hub and datasets caches are empty directories, and offline mode is not preset (so that
infoppo finds the Hub unreachable itself, as on a laptop without network)."""

from __future__ import annotations

from pathlib import Path

import pytest


def nothing_cached(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    import datasets.config
    from huggingface_hub import constants

    import infoppo_cli.data.hub as hub

    (root / "hub").mkdir(parents=True, exist_ok=True)
    (root / "datasets").mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", root / "datasets")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", datasets.config.HF_HUB_OFFLINE)  # restored after
    monkeypatch.setattr(hub, "_unreachable", None)
    monkeypatch.setattr(hub, "probe", lambda endpoint, timeout=3.0: "ConnectError: no network")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # go_offline() sets it; restored after the test
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
