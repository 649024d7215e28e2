"""HF copies rotate like OpenRLHF's DeepSpeed checkpoints; the plan's disk-use estimate."""

from __future__ import annotations

import json

import pytest

from infoppo_cli.openrlhf_adapter.checkpoints import (
    disk_space_warnings,
    disk_use_line,
    drop_partial_checkpoints,
    expected_disk_bytes,
    model_parameters,
    rotate_hf_copies,
    whole_checkpoint_or_none,
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


def _whole_checkpoint(root, tag):
    for model in ("_actor", "_critic"):
        _dirs(root / model, tag)
        (root / model / "latest").write_text(tag)


def test_a_save_cut_off_by_a_full_disk_leaves_no_partial_checkpoint_and_latest_as_it_was(tmp_path):
    _whole_checkpoint(tmp_path, "global_step1")

    def save_until_the_disk_is_full():  # DeepSpeed: the tag's files first, ``latest`` last
        _dirs(tmp_path / "_actor", "global_step2")
        _dirs(tmp_path, "global_step2_hf")
        (tmp_path / "_critic" / "latest").write_text("")  # opened for writing, then the disk was full
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"), whole_checkpoint_or_none(tmp_path, "global_step2"):
        save_until_the_disk_is_full()
    assert _left(tmp_path / "_actor") == ["global_step1", "latest"] == _left(tmp_path / "_critic")
    assert (tmp_path / "_actor" / "latest").read_text() == "global_step1"
    assert (tmp_path / "_critic" / "latest").read_text() == "global_step1"
    assert not (tmp_path / "global_step2_hf").exists()
    with whole_checkpoint_or_none(tmp_path, "global_step2"):  # a save that succeeds is left alone
        _whole_checkpoint(tmp_path, "global_step2")
    assert (tmp_path / "_actor" / "latest").read_text() == "global_step2"


def test_a_first_save_cut_off_leaves_no_latest(tmp_path):
    with pytest.raises(OSError), whole_checkpoint_or_none(tmp_path, "global_step1"):
        _dirs(tmp_path / "_actor", "global_step1")
        (tmp_path / "_actor" / "latest").write_text("")
        raise OSError(28, "No space left on device")
    assert _left(tmp_path) == []  # a resume starts from the beginning, as if no save had been tried


def test_a_first_save_cut_off_in_the_critic_leaves_no_actor_folder(tmp_path):
    """The actor's save was whole (with DeepSpeed's conversion script) when the critic's hit the full
    disk: a folder left with the script alone is what upstream's resume takes for a checkpoint."""
    with pytest.raises(OSError), whole_checkpoint_or_none(tmp_path, "global_step1"):
        _dirs(tmp_path / "_actor", "global_step1")
        (tmp_path / "_actor" / "zero_to_fp32.py").write_text("# DeepSpeed's")
        (tmp_path / "_actor" / "latest").write_text("global_step1")
        _dirs(tmp_path / "_critic", "global_step1")
        raise OSError(28, "No space left on device")
    assert _left(tmp_path) == []


def test_a_failed_first_save_keeps_a_folder_that_holds_a_checkpoint(tmp_path):
    _dirs(tmp_path / "_actor", "global_step1")  # a checkpoint whose ``latest`` is lost: not this save's
    with pytest.raises(OSError), whole_checkpoint_or_none(tmp_path, "global_step2"):
        _dirs(tmp_path / "_actor", "global_step2")
        raise OSError(28, "No space left on device")
    assert _left(tmp_path / "_actor") == ["global_step1"]


def test_the_folders_a_killed_save_left_past_latest_are_dropped(tmp_path):
    """OpenRLHF's rotation counts every folder as a checkpoint: a partial one would evict a whole one."""
    _whole_checkpoint(tmp_path, "global_step2")
    _dirs(tmp_path / "_actor", "global_step1", "global_step3", "best_global_step2")
    _dirs(tmp_path / "_critic", "global_step3")
    _dirs(tmp_path, "global_step2_hf", "global_step3_hf")
    removed = drop_partial_checkpoints(tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in removed) == [
        "_actor/global_step3",
        "_critic/global_step3",
        "global_step3_hf",
    ]
    assert _left(tmp_path / "_actor") == ["best_global_step2", "global_step1", "global_step2", "latest"]
    assert drop_partial_checkpoints(tmp_path / "none") == []
    (tmp_path / "_actor" / "latest").unlink()  # no whole checkpoint to tell partial ones by: kept
    assert drop_partial_checkpoints(tmp_path) == []


def test_the_plan_warns_when_the_disk_has_less_free_space_than_its_estimate(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    flags = {
        "actor.model_name_or_path": "Qwen/Qwen3-0.6B",
        "ckpt.max_num": 2,
        "ckpt.path": str(tmp_path / "run" / "ckpt"),
    }
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(20e6, 8e6, 12e6))
    (warning,) = disk_space_warnings(flags, False, tmp_path / "run")
    assert (
        warning.startswith(f"disk: {tmp_path / 'run'} has 12 MB free") and "need about 18 GB more" in warning
    )
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(1e12, 0, 1e12))
    assert disk_space_warnings(flags, False, tmp_path / "run") == []
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(20e6, 8e6, 18e9 - 1))  # one byte short
    assert disk_space_warnings(flags, False, tmp_path / "run")
    _dirs(tmp_path / "run" / "ckpt" / "_actor", "global_step1")  # a resumed run's checkpoint: 1 byte held
    assert disk_space_warnings(flags, False, tmp_path / "run") == []


def test_a_save_that_found_its_disk_full_says_so_whatever_layer_raised(tmp_path, monkeypatch):
    """torch's checkpoint writer reports a short write without an errno; a Ray task error carries the
    worker's error as text: both are told as the full disk they are, naming the checkpoint."""
    import errno
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(12e6, 12e6 - 4096, 4096))
    short_write = RuntimeError(
        "[enforce fail at inline_container.cc:664] . PytorchStreamWriter failed: file write failed"
    )
    for failure in (
        short_write,
        RuntimeError("ray::Actor.save_checkpoint(): OSError: No space left on device"),
    ):
        with pytest.raises(OSError) as info, whole_checkpoint_or_none(tmp_path, "global_step2"):
            raise failure
        assert info.value.errno == errno.ENOSPC
        assert (
            info.value.filename == str(tmp_path / "_actor" / "global_step2")
            and info.value.__cause__ is failure
        )
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(12e6, 1e6, 11e6))  # room enough: not that
    with pytest.raises(RuntimeError), whole_checkpoint_or_none(tmp_path, "global_step2"):
        raise short_write
    with pytest.raises(ValueError), whole_checkpoint_or_none(tmp_path, "global_step2"):
        raise ValueError("another failure")
