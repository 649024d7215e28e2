"""Shared test set-up: import stand-ins first, then CPU-only defaults."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
SUPPORT_DIR = TESTS_DIR / "support"
sys.path.insert(0, str(SUPPORT_DIR))

import import_stand_ins  # noqa: E402

import_stand_ins.install()

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def local_ray():
    """An embedded local Ray on CPU whose workers get the same import stand-ins as this process."""
    import ray

    repo = str(TESTS_DIR.parent)
    python_path = os.pathsep.join(filter(None, [str(SUPPORT_DIR), repo, os.environ.get("PYTHONPATH")]))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {"PYTHONPATH": python_path, "RAY_USAGE_STATS_ENABLED": "0"},
            "worker_process_setup_hook": "import_stand_ins.install",
        },
    )
    yield ray
    ray.shutdown()
