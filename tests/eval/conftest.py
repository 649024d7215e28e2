"""Shared by the eval tests: one tiny random Qwen3 (with its locally trained tokenizer) per session."""

from __future__ import annotations

import pytest
from tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(autouse=True)
def _one_set_of_grading_workers(shared_grading_workers):
    """In-process runs grade on the session's warm workers (``conftest.shared_grading_workers``)."""
