"""A sharpened tiny Qwen3 (entropies spread over ~0.5-6 nats) and a few hundred response tokens."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_fixtures import response_rows, write_jsonl
from tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def sharp_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("sharp") / "model", sharpen=8.0)


@pytest.fixture(scope="session")
def plain_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("plain") / "model", sharpen=3.0)


@pytest.fixture(autouse=True)
def _one_set_of_grading_workers(shared_grading_workers):
    """In-process runs grade on the session's warm workers (``conftest.shared_grading_workers``)."""


@pytest.fixture
def responses_file(tmp_path) -> Path:
    return write_jsonl(tmp_path / "samples.jsonl", response_rows())
