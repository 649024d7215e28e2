"""Faults found by a hostile but fair user: resumes that damaged, looped or mixed runs.

The launch is faked (a child process that stands for OpenRLHF); everything before it is the product's:
the plan, the resume checks on the run directory (manifest, DeepSpeed checkpoint), the manifest."""

from __future__ import annotations

import json

import pytest
from fake_launch import fake_plan

from infoppo_cli.errors import UsageError
from infoppo_cli.train.run import run_training


def _checkpoint(tmp_path, tag: str | None, step_dirs=("global_step4",)) -> None:
    actor = tmp_path / "run" / "ckpt" / "_actor"
    actor.mkdir(parents=True, exist_ok=True)
    for name in step_dirs:
        (actor / name).mkdir(exist_ok=True)
    if tag is not None:
        (actor / "latest").write_text(tag)


def _snapshot(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def finished_run(tmp_path, monkeypatch):
    """An InfoPPO run of 4 steps, finished, with its step-4 checkpoint."""
    assert run_training(fake_plan(tmp_path, monkeypatch, steps=4)) == 0
    _checkpoint(tmp_path, "global_step4")
    return tmp_path / "run"


def test_a_resume_with_another_method_is_refused_unless_named(tmp_path, monkeypatch, finished_run):
    before = _snapshot(finished_run)
    with pytest.raises(UsageError, match="trained with method 'infoppo', this command asks for 'ppo'"):
        run_training(fake_plan(tmp_path, monkeypatch, resume=True, steps=6, method="ppo"))
    assert _snapshot(finished_run) == before
    named = fake_plan(
        tmp_path,
        monkeypatch,
        resume=True,
        steps=6,
        method="ppo",
        resume_overrides=["method", "gamma", "lambda", "clip", "eps_low_info", "eps_high_info", "norm"],
    )
    assert run_training(named) == 0
    resumes = json.loads((finished_run / "manifest.json").read_text())["resumes"]
    assert resumes[-1]["overrides"]["method"] == ["infoppo", "ppo"]


def test_an_unknown_override_is_refused(tmp_path, monkeypatch, finished_run):
    with pytest.raises(UsageError, match="--resume-override 'colour' is not a run setting"):
        run_training(fake_plan(tmp_path, monkeypatch, resume=True, steps=6, resume_overrides=["colour"]))


def test_a_resume_to_fewer_steps_than_trained_is_refused_before_any_work(tmp_path, monkeypatch, finished_run):
    before = _snapshot(finished_run)
    with pytest.raises(UsageError, match="cannot resume to 2 RL steps: the run has trained 4 already"):
        run_training(fake_plan(tmp_path, monkeypatch, resume=True, steps=2))
    assert _snapshot(finished_run) == before


@pytest.mark.parametrize("steps", [2, 4])
def test_the_refusal_of_too_few_steps_states_the_true_bound(tmp_path, monkeypatch, finished_run, steps):
    """A finished run of 4 steps said `N >= 4` for --steps 2, and then refused --steps 4 too."""
    with pytest.raises(UsageError, match="N >= 5|N > 4") as refused:
        run_training(fake_plan(tmp_path, monkeypatch, resume=True, steps=steps))
    assert "N >= 4" not in str(refused.value)


@pytest.mark.parametrize(
    ("tag", "step_dirs"), [(None, ("global_step4",)), ("", ("global_step4",)), ("global_step9", ())]
)
def test_a_checkpoint_cut_off_while_written_is_refused_with_how_to_go_on(
    tmp_path, monkeypatch, tag, step_dirs
):
    """A checkpoint folder without ``latest`` (killed before DeepSpeed wrote it, or while it did), or a
    ``latest`` naming no folder: which checkpoint is whole cannot be told, so nothing is guessed."""
    assert run_training(fake_plan(tmp_path, monkeypatch, "raise SystemExit(137)", steps=4)) == 137
    _checkpoint(tmp_path, tag, step_dirs=step_dirs)
    before = _snapshot(tmp_path / "run")
    with pytest.raises(UsageError, match="holds no complete checkpoint .* remove .* to retrain this run"):
        run_training(fake_plan(tmp_path, monkeypatch, resume=True, steps=4))
    assert _snapshot(tmp_path / "run") == before


def test_a_run_whose_first_save_failed_resumes_from_step_0(tmp_path, monkeypatch):
    """A first save that found the disk full is undone but leaves ``ckpt/_actor`` with DeepSpeed's
    ``zero_to_fp32.py`` in it: no checkpoint at all, and yet ``--resume`` refused it as "cut off", so a
    run stopped by a full disk could not go on once space was freed."""
    assert run_training(fake_plan(tmp_path, monkeypatch, "raise SystemExit(1)", steps=4)) == 1
    _checkpoint(tmp_path, None, step_dirs=())
    (tmp_path / "run" / "ckpt" / "_actor" / "zero_to_fp32.py").write_text("# DeepSpeed's script\n")
    resumed = fake_plan(tmp_path, monkeypatch, resume=True, steps=4)
    assert run_training(resumed) == 0
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "finished"


def test_a_failed_resume_of_a_finished_run_leaves_it_finished(tmp_path, monkeypatch, finished_run):
    before = (finished_run / "manifest.json").read_bytes()
    assert run_training(fake_plan(tmp_path, monkeypatch, "raise SystemExit(1)", resume=True, steps=6)) == 1
    assert (finished_run / "manifest.json").read_bytes() == before
    assert json.loads(before)["status"] == "finished"
