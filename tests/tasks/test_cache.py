"""The task cache: built once per recipe, verified on every use, rebuilt when corrupt, never left
half-written by Ctrl-C or SIGKILL, and safe with two builders at once (real child processes)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tiny_task import tiny_recipe

from infoppo_cli.errors import UsageError
from infoppo_cli.tasks import TaskRecipe, cache_root, ensure_task, task_dir, verify_task
from infoppo_cli.tasks.cache import MANIFEST

SUPPORT = Path(__file__).resolve().parents[1] / "support"

CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {support!r})
    from tiny_task import tiny_recipe
    from infoppo_cli.tasks import ensure_task

    root, stall_stage, stall_at, pause = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])

    def progress(stage, done, total):
        if stage == "waiting":
            print("waiting", flush=True)
        if stage == stall_stage and done == stall_at:
            print("stalled", flush=True)
            time.sleep(pause)

    try:
        files = ensure_task(tiny_recipe(), root=root, on_progress=progress)
    except KeyboardInterrupt:
        sys.exit(130)
    print("built" if files.built_now else "cached", flush=True)
    """
)


def start_child(tmp_path: Path, root: Path, stage: str, at: int, pause: float) -> subprocess.Popen[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(support=str(SUPPORT)))
    command = [sys.executable, str(script), str(root), stage, str(at), str(pause)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_until_stalled(process: subprocess.Popen[str]) -> None:
    for line in process.stdout:  # other lines: libraries' start-up notes (DeepSpeed's, on save)
        if line.strip() == "stalled":
            return
    raise AssertionError(f"the child ended before it stalled: {process.stderr.read()}")


def entries(root: Path) -> list[str]:
    return sorted(path.name for path in (root / "tasks").iterdir())


def test_a_build_is_complete_verified_and_loadable(tmp_path):
    files = ensure_task(tiny_recipe(), root=tmp_path)
    assert files.built_now and files.directory == task_dir(tiny_recipe(), tmp_path)
    assert files.directory.name == f"tiny-{tiny_recipe().recipe_id()}"
    assert verify_task(files.directory, files.recipe_id) is None
    assert files.train_file.is_file() and files.heldout_file.is_file() and files.build_seconds > 0
    assert (files.model_dir / "config.json").is_file() and (files.model_dir / "tokenizer.json").is_file()
    manifest = json.loads((files.directory / MANIFEST).read_text())
    assert "model/model.safetensors" in manifest["files"]
    assert manifest["recipe"]["versions"]["torch"]
    assert entries(tmp_path) == sorted([files.directory.name, f".{files.directory.name}.lock"])


def test_a_second_call_uses_the_cache_and_a_new_recipe_builds_anew(tmp_path):
    first = ensure_task(tiny_recipe(), root=tmp_path)
    weights = first.model_dir / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    progress = []
    again = ensure_task(tiny_recipe(), root=tmp_path, on_progress=lambda *event: progress.append(event))
    assert not again.built_now and again.directory == first.directory and progress == []
    assert weights.stat().st_mtime_ns == stamp
    assert again.build_seconds == pytest.approx(first.build_seconds, abs=0.01)
    other = ensure_task(tiny_recipe(seed=1), root=tmp_path)
    assert other.built_now and other.directory != first.directory
    assert verify_task(first.directory, first.recipe_id) is None  # the other recipe's build is kept


def test_every_ingredient_of_the_recipe_changes_its_id():
    base = tiny_recipe()
    variants = [
        tiny_recipe(seed=1),
        tiny_recipe(name="other"),
        TaskRecipe(**{**base.__dict__, "measure_samples": 1}),
        TaskRecipe(**{**base.__dict__, "teacher": type(base.teacher)(wrong_rate=0.1)}),
        TaskRecipe(**{**base.__dict__, "model": type(base.model)(hidden_size=64)}),
        TaskRecipe(**{**base.__dict__, "warm_start": type(base.warm_start)(steps=4)}),
    ]
    ids = {recipe.recipe_id() for recipe in variants}
    assert len(ids) == len(variants) and base.recipe_id() not in ids
    assert tiny_recipe().recipe_id() == base.recipe_id()


def test_library_versions_are_part_of_the_recipe(monkeypatch):
    import infoppo_cli.tasks.build as build

    before = tiny_recipe().recipe_id()
    monkeypatch.setattr(build, "installed_version", lambda name: "0.0-other")
    assert tiny_recipe().recipe_id() != before


@pytest.mark.parametrize(
    "damage",
    ["flip a weight byte", "delete the training file", "truncate the manifest", "edit a held-out answer"],
)
def test_a_corrupt_cache_is_rebuilt_never_used(tmp_path, damage):
    first = ensure_task(tiny_recipe(), root=tmp_path)
    heldout = first.heldout_file.read_bytes()
    if damage == "flip a weight byte":
        weights = first.model_dir / "model.safetensors"
        data = bytearray(weights.read_bytes())
        data[-1] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif damage == "delete the training file":
        first.train_file.unlink()
    elif damage == "truncate the manifest":
        (first.directory / MANIFEST).write_text("{")
    else:
        first.heldout_file.write_bytes(heldout.replace(b'"answer": "', b'"answer": "1', 1))
    assert verify_task(first.directory, first.recipe_id) is not None
    rebuilt = ensure_task(tiny_recipe(), root=tmp_path)
    assert rebuilt.built_now and verify_task(rebuilt.directory, rebuilt.recipe_id) is None
    assert rebuilt.heldout_file.read_bytes() == heldout
    assert entries(tmp_path) == sorted([rebuilt.directory.name, f".{rebuilt.directory.name}.lock"])


def test_a_manifest_of_another_recipe_or_missing_a_file_does_not_verify(tmp_path):
    files = ensure_task(tiny_recipe(), root=tmp_path)
    assert "not" in verify_task(files.directory, "0" * 12)
    manifest = json.loads((files.directory / MANIFEST).read_text())
    del manifest["files"]["train.jsonl"]
    (files.directory / MANIFEST).write_text(json.dumps(manifest))
    assert verify_task(files.directory, files.recipe_id) == "the manifest does not list train.jsonl"


@pytest.mark.slow  # real interrupts of child processes
@pytest.mark.parametrize("stage, at", [("warm start", 2), ("writing", 1)])
def test_ctrl_c_mid_build_leaves_nothing_half_written(tmp_path, stage, at):
    root = tmp_path / "cache"
    child = start_child(tmp_path, root, stage, at, pause=60)
    wait_until_stalled(child)
    assert any(name.endswith(".tmp") for name in entries(root))
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=60) == 130
    final = task_dir(tiny_recipe(), root)
    assert entries(root) == [f".{final.name}.lock"]
    files = ensure_task(tiny_recipe(), root=root)
    assert files.built_now and verify_task(files.directory, files.recipe_id) is None


@pytest.mark.slow  # real interrupts of child processes
@pytest.mark.parametrize("stage, at", [("warm start", 2), ("writing", 1)])
def test_sigkill_leftovers_are_removed_by_the_next_build(tmp_path, stage, at):
    root = tmp_path / "cache"
    child = start_child(tmp_path, root, stage, at, pause=60)
    wait_until_stalled(child)
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=60) == -signal.SIGKILL
    final = task_dir(tiny_recipe(), root)
    leftovers = [name for name in entries(root) if name.endswith(".tmp")]
    assert len(leftovers) == 1 and not final.exists()
    files = ensure_task(tiny_recipe(), root=root)
    assert files.built_now and verify_task(files.directory, files.recipe_id) is None
    assert entries(root) == sorted([final.name, f".{final.name}.lock"])


@pytest.mark.slow
def test_two_builders_at_once_build_once_and_both_get_the_task(tmp_path):
    root = tmp_path / "cache"
    first = start_child(tmp_path, root, "warm start", 1, pause=2)
    wait_until_stalled(first)  # the first holds the lock and is mid-build
    second = start_child(tmp_path, root, "warm start", 1, pause=2)
    first_out, second_out = (process.communicate(timeout=120)[0].split() for process in (first, second))
    assert (first_out[-1], second_out[-1]) == ("built", "cached")
    assert "waiting" in second_out and "stalled" not in second_out  # it waited, and did not build
    final = task_dir(tiny_recipe(), root)
    assert verify_task(final, tiny_recipe().recipe_id()) is None
    assert entries(root) == sorted([final.name, f".{final.name}.lock"])


def test_the_cache_root_follows_infoppo_cache_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("INFOPPO_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"
    monkeypatch.delenv("INFOPPO_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "infoppo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "infoppo"


def test_a_cache_that_cannot_be_created_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(UsageError, match="cannot build the task in the cache"):
        ensure_task(tiny_recipe(), root=blocker)
