"""A moved sweep directory resumes where it now is; a run it left running there is the one exception."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.launcher import launch_argv
from infoppo_cli.sweep.relocate import rerooted
from infoppo_cli.sweep.request import SweepRequest
from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep


def make_plan(out: Path):
    return build_plan("gamma", preset="qwen3-4b", out_dir=out, values=["0.999"], eval_benches=("aime24",))


def open_plan(plan):
    return open_sweep(plan, command=SweepRequest().resume_command(plan), settings=plan.settings())


def started_sweep(out: Path) -> SweepState:
    """A sweep with its first run done and its second one failed (so both commands are recorded)."""
    state, _ = open_plan(make_plan(out))
    for run, code in zip(state.runs, (0, 1), strict=True):
        phase = run.next_phase()
        state.start_phase(run, phase, [*launch_argv(run, phase), "--resume"], "train.log", new_attempt=True)
        Path(run.output_dir).mkdir(parents=True, exist_ok=True)
        (Path(run.output_dir) / "manifest.json").write_text("{}")  # as `infoppo train` leaves it
        state.finish_phase(run, phase, code)
    return state


def test_a_moved_sweep_resumes_with_its_paths_under_the_new_directory(tmp_path: Path) -> None:
    old, new = tmp_path / "old" / "sweep", tmp_path / "elsewhere" / "sweep"
    started_sweep(old)
    new.parent.mkdir()
    shutil.move(old, new)
    plan = make_plan(new)
    state, summary = open_plan(plan)  # the same options at the new place: no "another train request"
    assert summary.moved_from == str(old) and not summary.created
    assert [run.output_dir for run in state.runs] == [str(new / point.name) for point in plan.points]
    for run, point in zip(state.runs, plan.points, strict=True):  # the request, and so its command line
        launched = [[arg for arg in launch_argv(run, phase) if arg != "--resume"] for phase in run.phases]
        assert launched == [
            argv for _, argv in plan.phases(point)
        ]  # (--resume: the run found at its new place)
    first = state.runs[0].phase("train")
    assert first.status == "done" and first.launched == [*plan.train_command(plan.points[0]), "--resume"]
    assert str(old) not in (new / STATE_FILE).read_text()  # saved re-rooted: the next read needs nothing
    assert SweepState.load(new / STATE_FILE).moved_from is None


def test_a_copy_resumes_in_the_copy_and_leaves_the_original_alone(tmp_path: Path) -> None:
    original, copy = tmp_path / "a" / "sweep", tmp_path / "b" / "sweep"
    started_sweep(original)
    before = (original / STATE_FILE).read_text()
    shutil.copytree(original, copy)
    state, summary = open_plan(make_plan(copy))
    assert summary.moved_from == str(original)
    assert all(run.output_dir.startswith(str(copy)) for run in state.runs)
    assert (original / STATE_FILE).read_text() == before


@pytest.mark.parametrize(
    ("field", "value", "job"),
    [
        ("slurm_job_id", "4242", "SLURM job 4242"),
        ("ray_job_id", "infoppo-x-train-1", "Ray job infoppo-x-train-1"),
    ],
)
def test_a_run_left_running_as_a_job_keeps_the_sweep_where_it_was(
    tmp_path: Path, field: str, value: str, job: str
) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    state, _ = open_plan(make_plan(old))
    run = state.runs[0]
    state.start_phase(run, run.phases[0], launch_argv(run, run.phases[0]), "train.log", new_attempt=True)
    state.record_handle(run.phases[0], **{"slurm_job_id" if field == "slurm_job_id" else "job_id": value})
    shutil.move(old, new)
    before = (new / STATE_FILE).read_text()
    with pytest.raises(UsageError) as refused:
        open_plan(make_plan(new))
    assert str(refused.value) == (
        f"cannot resume {new}: run {run.name} was running as {job} when the sweep was moved from {old}, "
        f"and it writes there; move the directory back to {old} to re-attach to it"
    )
    assert (new / STATE_FILE).read_text() == before


def test_a_live_local_process_keeps_the_sweep_where_it_was_and_a_dead_one_does_not(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    state, _ = open_plan(make_plan(old))
    run = state.runs[0]
    state.start_phase(run, run.phases[0], launch_argv(run, run.phases[0]), "train.log", new_attempt=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", run.output_dir])
    try:
        state.record_handle(run.phases[0], pid=alive.pid)
        shutil.copytree(old, new)
        with pytest.raises(UsageError, match=f"running as process {alive.pid} when the sweep was moved"):
            open_plan(make_plan(new))
    finally:
        alive.kill()
        alive.wait()
    resumed, summary = open_plan(make_plan(new))  # the process is gone: the runner runs it again here
    assert summary.running == (run.name,) and resumed.runs[0].output_dir == str(new / run.name)


def test_a_file_read_where_it_was_written_is_not_rewritten(tmp_path: Path) -> None:
    state = started_sweep(tmp_path / "sweep")
    document = json.loads(state.path.read_text())
    assert SweepState.load(state.path).moved_from is None
    assert json.loads(state.path.read_text()) == document


PARTS = st.lists(st.text(alphabet="abc-_.", min_size=1, max_size=4), min_size=1, max_size=3)


@given(old=PARTS, rest=st.lists(st.text(alphabet="abc", min_size=1, max_size=3), max_size=3))
def test_only_paths_under_the_old_directory_move(old: list[str], rest: list[str]) -> None:
    root = "/" + "/".join(old)
    inside = "/".join([root, *rest])
    assert rerooted(inside, root, "/new") == "/".join(["/new", *rest])
    assert rerooted(f"--data={inside}", root, "/new") == "--data=" + "/".join(["/new", *rest])
    assert rerooted(root + "x/file", root, "/new") == root + "x/file"  # a sibling with a longer name
    assert rerooted("--gamma", root, "/new") == "--gamma" and rerooted("0.999", root, "/new") == "0.999"
