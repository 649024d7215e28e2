"""HF copies rotate like OpenRLHF's DeepSpeed checkpoints; the plan's disk-use estimate."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.openrlhf_adapter.checkpoints import (
    disk_use_line,
    expected_disk_bytes,
    model_parameters,
    rotate_hf_copies,
)


def _dirs(root, *names):
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "model.safetensors").write_bytes(b"x")


def _left(root):
    return sorted(p.name for p in root.iterdir())


def test_rotation_makes_room_before_a_save_like_openrlhf(tmp_path):
    _dirs(
        tmp_path, "global_step10_hf", "global_step2_hf", "global_step20_hf", "_actor", "best_global_step10_hf"
    )
    removed = rotate_hf_copies(tmp_path, "global_step30", max_num=2)
    assert sorted(p.name for p in removed) == ["global_step10_hf", "global_step2_hf"]  # by step, not by name
    assert _left(tmp_path) == ["_actor", "best_global_step10_hf", "global_step20_hf"]
    rotate_hf_copies(tmp_path, "best_global_step30", max_num=2)  # a new best replaces the old best
    assert _left(tmp_path) == ["_actor", "global_step20_hf"]
    assert rotate_hf_copies(tmp_path / "missing", "global_step1", 3) == []


def test_resaving_the_same_tag_keeps_it(tmp_path):
    _dirs(tmp_path, "global_step5_hf")
    assert rotate_hf_copies(tmp_path, "global_step5", max_num=1) == []


def test_disk_estimate():
    params = 4e9
    assert expected_disk_bytes(params, 3, save_hf=False, with_critic=False) == 3 * 14 * params + 2 * params
    with_all = expected_disk_bytes(params, 3, save_hf=True, with_critic=True)
    assert with_all == 3 * (28 + 2) * params + 2 * params
    line = disk_use_line({"actor.model_name_or_path": "Qwen/Qwen3-4B-Base", "ckpt.max_num": 3}, False)
    assert line.startswith("about 176 GB") and "4.0B parameters" in line


def test_model_parameters_from_a_local_directory_or_the_name(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"torch_dtype": "float32"}))
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 4000)
    assert model_parameters(str(tmp_path)) == pytest.approx(1000)
    assert model_parameters("meta-llama/Llama-3.2-3B-Instruct") == 3e9
    assert model_parameters("gpt2") is None
    assert disk_use_line({"actor.model_name_or_path": "gpt2", "ckpt.save_hf": True}, True).startswith(
        "unknown"
    )
