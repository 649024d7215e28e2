"""sweep.json: creation, transitions, resume semantics, refusal of a different sweep, the lock."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.launcher import launch_argv
from infoppo_cli.sweep.request import SweepRequest
from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep


def make_plan(tmp_path: Path, **options):
    options.setdefault("values", ["0.999,0.99"])
    return build_plan("gamma", preset="qwen3-4b", out_dir=tmp_path / "sw", **options)


def open_plan(plan, retry_failed: bool = False, force_new_grid: bool = False):
    return open_sweep(
        plan,
        command=SweepRequest().resume_command(plan),
        settings=plan.settings(),
        retry_failed=retry_failed,
        force_new_grid=force_new_grid,
    )


def finish(state: SweepState, name: str, *codes: int) -> None:
    """Run the named run's phases to the given exit codes (one per phase, in order); a train phase leaves
    its run directory's manifest, as ``infoppo train`` does."""
    run = state.run(name)
    for index, code in enumerate(codes):
        phase = run.next_phase()
        state.start_phase(run, phase, launch_argv(run, phase), f"{phase.name}.log", new_attempt=index == 0)
        if phase.name == "train":
            Path(run.output_dir).mkdir(parents=True, exist_ok=True)
            (Path(run.output_dir) / "manifest.json").write_text("{}")
        state.finish_phase(run, phase, code)


def test_a_new_sweep_records_every_run_pending_with_its_parameters(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, eval_benches=("aime24",))
    state, summary = open_plan(plan)
    assert summary.created
    document = json.loads((plan.out_dir / STATE_FILE).read_text())
    assert document["kind"] == "gamma" and document["preset"] == "qwen3-4b"
    assert document["settings"]["values"] == ["0.999", "0.99"]
    assert document["versions"]["infoppo"]
    assert [run["name"] for run in document["runs"]] == [p.name for p in plan.points]
    first = document["runs"][0]
    assert first["status"] == "pending" and first["attempts"] == 0
    assert first["parameters"] == {"gamma": 0.999, "lambd": 0.99}
    assert first["time"] == "info" and first["method"] == "infoppo" and first["seed"] == 1
    assert first["output_dir"] == str(plan.out_dir / first["name"])
    assert [phase["name"] for phase in first["phases"]] == ["train", "eval"]
    train = first["phases"][0]
    assert train["request"] == asdict(plan.train_request(plan.points[0])) and train["command"] is None
    assert launch_argv(state.runs[0], state.runs[0].phases[0]) == plan.train_command(plan.points[0])
    reloaded = SweepState.load(plan.out_dir / STATE_FILE)
    assert [run.name for run in reloaded.runs] == [run.name for run in state.runs]


def test_run_status_follows_its_phases_with_timing_and_attempts(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, eval_benches=("aime24",))
    state, _ = open_plan(plan)
    run = state.runs[0]
    train = run.next_phase()
    state.start_phase(run, train, [*launch_argv(run, train), "--resume"], "train.log", new_attempt=True)
    assert (run.status, run.attempts, train.status) == ("running", 1, "running")
    assert train.launched[-1] == "--resume"
    state.finish_phase(run, train, 0)
    assert run.status == "pending" and train.status == "done" and train.duration_s is not None
    evaluation = run.next_phase()
    assert evaluation.name == "eval"
    state.start_phase(run, evaluation, evaluation.command, "eval.log", new_attempt=False)
    state.finish_phase(run, evaluation, 3, note="boom")
    assert run.status == "failed" and run.attempts == 1
    assert run.error == "eval exited with code 3: boom" and run.finished is not None
    on_disk = SweepState.load(state.path).run(run.name)
    assert on_disk.status == "failed" and on_disk.phase("eval").exit_code == 3


def test_resume_skips_done_keeps_failed_and_retries_them_only_when_asked(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    state, _ = open_plan(plan)
    done, failed, interrupted = plan.points[0].name, plan.points[1].name, plan.points[2].name
    finish(state, done, 0)
    finish(state, failed, 1)
    run = state.run(interrupted)
    state.start_phase(run, run.phases[0], launch_argv(run, run.phases[0]), "train.log", new_attempt=True)

    resumed, summary = open_plan(plan)
    assert not summary.created
    assert summary.done == (done,) and summary.failed_kept == (failed,) and summary.failed_retried == ()
    assert summary.running == (interrupted,)
    assert resumed.run(done).status == "done" and resumed.run(failed).status == "failed"
    assert resumed.run(interrupted).status == "running"  # the runner re-attaches or marks it

    retried, summary = open_plan(plan, retry_failed=True)
    assert summary.failed_retried == (failed,)
    run = retried.run(failed)
    assert run.status == "pending" and run.phases[0].note.startswith("retry")
    assert retried.run(done).status == "done" and run.attempts == 1


def test_a_done_run_whose_directory_was_removed_runs_again_with_its_evals(tmp_path: Path) -> None:
    """Removing a run's directory is how a user asks for it again (a run found faulty); the sweep kept it
    "done", skipped it and reported a run that was no longer there."""
    import shutil

    from infoppo_cli.cli.sweep_display import resume_line
    from infoppo_cli.sweep.preflight import points_to_train

    plan = make_plan(tmp_path, eval_benches=("aime24",))
    state, _ = open_plan(plan)
    kept, removed = plan.points[0].name, plan.points[1].name
    finish(state, kept, 0, 0)
    finish(state, removed, 0, 0)
    shutil.rmtree(state.run(removed).output_dir)
    assert [point.name for point, _ in points_to_train(plan, SweepState.load(state.path))] == [
        point.name for point in plan.points if point.name != kept
    ]
    resumed, summary = open_plan(plan)
    assert summary.removed == (removed,) and summary.done == (kept,)
    assert [phase.status for phase in resumed.run(removed).phases] == ["pending", "pending"]
    assert resumed.run(removed).phases[0].note == "its run directory was removed: run again"
    assert resumed.run(kept).status == "done"
    assert f"1 done but removed, running again ({removed})" in resume_line(summary)


def test_retry_keeps_a_done_train_phase_and_reruns_only_the_failed_eval(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, eval_benches=("aime24",))
    state, _ = open_plan(plan)
    name = plan.points[0].name
    finish(state, name, 0, 1)
    retried, _ = open_plan(plan, retry_failed=True)
    run = retried.run(name)
    assert [phase.status for phase in run.phases] == ["done", "pending"]
    assert run.next_phase().name == "eval"


def test_resume_adds_new_grid_points_and_eval_phases(tmp_path: Path) -> None:
    state, _ = open_plan(make_plan(tmp_path))
    finish(state, state.runs[0].name, 0)
    wider = make_plan(tmp_path, values=["0.999,0.99,0.9"], eval_benches=("aime25",))
    resumed, summary = open_plan(wider, force_new_grid=True)
    assert summary.added == ("gamma-0.9-info-seed1", "gamma-0.9-token-seed1")
    first = resumed.runs[0]
    assert [p.name for p in first.phases] == ["train", "eval"] and first.status == "pending"
    assert first.phase("train").status == "done"
    assert len(resumed.runs) == 6


def test_a_different_sweep_or_train_command_in_the_same_directory_is_refused(tmp_path: Path) -> None:
    state, _ = open_plan(make_plan(tmp_path))
    finish(state, state.runs[0].name, 0)
    with pytest.raises(UsageError, match=r"started with another train request \(overrides: recorded \[\]"):
        open_plan(make_plan(tmp_path, train_options={"overrides": ["actor.lr=2e-6"]}))
    other = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sw")
    with pytest.raises(UsageError, match="holds a gamma sweep"):
        open_plan(other)


def test_a_malformed_state_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    path.write_text('{"schema": 1, "runs": [')
    with pytest.raises(UsageError, match=f"cannot read sweep state {path}"):
        SweepState.load(path)
    path.write_text(json.dumps({"schema": 99, "runs": []}))
    with pytest.raises(UsageError, match="schema must be 2, got 99"):
        SweepState.load(path)
    path.write_text(json.dumps({"schema": 1, "runs": []}))  # an older infoppo's: commands, not requests
    with pytest.raises(UsageError, match=r"written by an older infoppo \(schema 1.*another --out"):
        SweepState.load(path)


def test_a_failed_save_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state, _ = open_plan(make_plan(tmp_path))
    before = state.path.read_text()
    run = state.runs[0]
    monkeypatch.setattr(json, "dumps", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        state.start_phase(run, run.phases[0], ["infoppo", "train"], "train.log", new_attempt=True)
    monkeypatch.undo()
    assert state.path.read_text() == before
    assert not [p for p in state.path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("options", "difference"),
    [
        ({"values": ["0.999,0.99,0.9"]}, "--values 0.999,0.99 -> 0.999,0.99,0.9"),
        ({"seeds": 2}, "--seeds 1 -> 2"),
        ({"first_seed": 3}, "--first-seed 1 -> 3"),
        ({"time": "info"}, "--time info,token -> info"),
    ],
)
def test_another_grid_in_the_same_directory_is_refused_naming_the_difference(
    tmp_path: Path, options: dict, difference: str
) -> None:
    state, _ = open_plan(make_plan(tmp_path))
    before = state.path.read_text()
    refusal = f"holds another grid \\({re.escape(difference)}\\).*--force-new-grid"
    with pytest.raises(UsageError, match=refusal):
        open_plan(make_plan(tmp_path, **options))
    assert state.path.read_text() == before
    same, summary = open_plan(make_plan(tmp_path))  # the same grid resumes
    assert not summary.created and len(same.runs) == 4
    forced, _ = open_plan(make_plan(tmp_path, **options), force_new_grid=True)
    assert {run.name for run in state.runs} <= {run.name for run in forced.runs}


def test_another_grid_without_recorded_settings_is_named_by_its_runs(tmp_path: Path) -> None:
    open_sweep(make_plan(tmp_path), command=[], settings={})
    with pytest.raises(UsageError, match="runs gamma-0.99-info-seed1, gamma-0.99-token-seed1 -> -"):
        open_sweep(make_plan(tmp_path, values=["0.999"]), command=[], settings={})


def test_new_tracking_names_resume_the_same_runs(tmp_path: Path) -> None:
    """A sweep started before its runs were named for tracking (or renamed since) is the same experiment:
    done runs stay done with the request they ran; a failed one retries under the new names."""
    plan = make_plan(tmp_path)
    state, _ = open_plan(plan)
    done, failed = plan.points[0].name, plan.points[1].name
    for run in state.runs:  # as recorded before: no wandb group, no run name
        run.phase("train").request.update(wandb_group=None, run_name=None)
    state.save()
    finish(state, done, 0)
    finish(state, failed, 1)
    renamed = make_plan(tmp_path, train_options={"wandb_project": "lab"}, run_name_prefix="v2")
    resumed, summary = open_plan(renamed, retry_failed=True)
    assert summary.done == (done,) and summary.failed_retried == (failed,)
    assert resumed.run(done).phase("train").request["run_name"] is None  # what it ran
    retry = resumed.run(failed).phase("train").request
    assert retry["run_name"] == f"v2-{failed}" and retry["wandb_project"] == "lab"


def test_a_run_started_with_another_request_is_refused_naming_the_difference(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, train_options={"steps": 30})
    state, _ = open_plan(plan)
    finish(state, plan.points[0].name, 0)
    resumed, summary = open_plan(plan)
    assert summary.done == (plan.points[0].name,)
    with pytest.raises(UsageError, match=r"another train request \(steps: recorded 30, now 31\)"):
        open_plan(make_plan(tmp_path, train_options={"steps": 31}))
