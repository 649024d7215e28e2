"""Choosing a generation backend by name."""

from __future__ import annotations

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.backends import load_backend
from infoppo_cli.eval.hf_backend import HFBackend


def test_hf_is_loaded_with_the_batch_size(tiny_model_dir):
    backend = load_backend("hf", str(tiny_model_dir), batch_size=3)
    assert isinstance(backend, HFBackend)
    assert backend.name == "hf" and backend.batch_size == 3


def test_an_unknown_backend_names_the_known_ones(tiny_model_dir):
    with pytest.raises(UsageError, match="unknown backend 'sglang'; choose one of: vllm, hf"):
        load_backend("sglang", str(tiny_model_dir))


def test_a_missing_model_directory_is_refused_before_any_backend_loads(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        load_backend("hf", str(tmp_path / "absent"))
