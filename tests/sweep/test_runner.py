"""Running sweeps: local execution with a stand-in `infoppo`, resume, Ctrl-C, and Ray job submission.

The stand-in is a small script written by the tests. It behaves like `infoppo train` / `infoppo eval`
as far as a sweep can see (files in the output directory, exit codes) and reads its instructions from
a JSON file beside it, so the same script works as a local child and inside a Ray job.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import replace
from pathlib import Path

import pytest
from sweep_stand_in import StandIn, write_prompts
from train_command_line import request_of

from infoppo_cli.errors import EnvironmentProblem
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.launcher import EXECUTABLE_ENV, Handle, launch_argv
from infoppo_cli.sweep.local import LocalLauncher
from infoppo_cli.sweep.ray_jobs import RayJobLauncher
from infoppo_cli.sweep.request import SweepRequest
from infoppo_cli.sweep.runner import run_sweep
from infoppo_cli.sweep.state import STATE_FILE, SweepState, open_sweep
from infoppo_cli.train.request import TrainRequest


@pytest.fixture
def stand_in(tmp_path: Path) -> StandIn:
    return StandIn(tmp_path / "bin")


def output_dirs(calls: list[list[str]], phase: str = "train") -> list[str]:
    flag = "--output-dir" if phase == "train" else "--out"
    return [Path(c[c.index(flag) + 1]).name for c in calls if c[0] == phase]


def sweep_cli(stand_in: StandIn, out: Path, *extra: str, **popen) -> subprocess.Popen[str]:
    env = {**os.environ, EXECUTABLE_ENV: " ".join(stand_in.executable), "COLUMNS": "200"}
    argv = [sys.executable, "-m", "infoppo_cli", "sweep", "gamma", "--values", "0.999,0.99"]
    prompts = write_prompts(out.parent / "prompts.jsonl")
    argv += ["--out", str(out), "--poll-interval", "0.05", "--data", str(prompts), *extra]
    argv += ["--eval-bench", "none"]  # the AIME sets are not cached on a test machine
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def run_sweep_cli(stand_in: StandIn, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    process = sweep_cli(stand_in, out, *extra)
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def statuses(out: Path) -> dict[str, str]:
    return {run.name: run.status for run in SweepState.load(out / STATE_FILE).runs}


# --------------------------------------------------------------------------- local runs


@pytest.mark.slow
def test_local_sweep_runs_train_then_eval_and_resumes_failed_runs_only_when_asked(
    tmp_path: Path, stand_in: StandIn
) -> None:
    out = tmp_path / "sweep"
    stand_in.configure(fail=["gamma-0.99-token"])
    first = run_sweep_cli(stand_in, out, "--final-eval-bench", "aime24,aime25")
    assert first.returncode == 1, first.stderr
    assert statuses(out) == {
        "gamma-0.999-info-seed1": "done",
        "gamma-0.999-token-seed1": "done",
        "gamma-0.99-info-seed1": "done",
        "gamma-0.99-token-seed1": "failed",
    }
    calls = stand_in.calls()
    assert output_dirs(calls) == list(statuses(out))  # one after another, in grid order
    assert len(output_dirs(calls, "eval")) == 3  # no eval after a failed train
    done_dir = out / "gamma-0.999-info-seed1"
    assert "stand-in training gamma-0.999-info-seed1" in (done_dir / "train.log").read_text()
    assert "stand-in eval done" in (done_dir / "eval.log").read_text()
    assert json.loads((done_dir / "eval" / "metrics.json").read_text())["benches"]["aime25"]["mean@k"] == 12.5
    assert "stand-in failure" in (out / "gamma-0.99-token-seed1" / "train.log").read_text()
    assert "1 run(s) failed" in first.stdout and "--retry-failed" in first.stdout

    failing_again = run_sweep_cli(stand_in, out, "--final-eval-bench", "aime24,aime25", "--retry-failed")
    assert failing_again.returncode == 1 and "1 run(s) failed" in failing_again.stdout
    assert "--retry-failed" not in failing_again.stdout  # no advice to do what was just done
    calls = stand_in.calls()

    stand_in.configure()  # the cause of the failure is fixed
    again = run_sweep_cli(stand_in, out, "--final-eval-bench", "aime24,aime25")
    assert again.returncode == 1
    assert stand_in.calls() == calls  # done skipped, failed kept
    assert "3 done (skipped)" in again.stdout

    retried = run_sweep_cli(stand_in, out, "--final-eval-bench", "aime24,aime25", "--retry-failed")
    assert retried.returncode == 0, retried.stderr
    new_calls = stand_in.calls()[len(calls) :]
    assert [call[0] for call in new_calls] == ["train", "eval"]
    assert output_dirs(new_calls) == ["gamma-0.99-token-seed1"]
    assert request_of(new_calls[0][1:]).resume  # the failed attempt had written manifest.json
    assert set(statuses(out).values()) == {"done"}
    state = SweepState.load(out / STATE_FILE)
    run = state.run("gamma-0.99-token-seed1")
    assert run.attempts == 3 and run.duration_s is not None and run.phase("train").exit_code == 0
    launched = request_of(run.phase("train").launched)
    assert launched == replace(TrainRequest(**run.phase("train").request), resume=True)
    assert state.settings["eval_bench"] == ["aime24", "aime25"]


@pytest.mark.slow
def test_a_rejected_command_line_stops_the_sweep_with_exit_2(tmp_path: Path, stand_in: StandIn) -> None:
    out = tmp_path / "sweep"
    stand_in.configure(reject=True)
    result = run_sweep_cli(stand_in, out)
    assert result.returncode == 2
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1
    assert (
        "gamma-0.999-info-seed1: train stopped with a usage error (exit 2): error: no such option: --bogus"
        in error[0]
    )
    assert len(stand_in.calls()) == 1
    assert list(statuses(out).values()) == ["failed", "pending", "pending", "pending"]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.slow
def test_ctrl_c_stops_the_child_and_leaves_a_consistent_state_that_resumes(
    tmp_path: Path, stand_in: StandIn, stop: signal.Signals
) -> None:
    out = tmp_path / "sweep"
    stand_in.configure(sleep=60)
    process = sweep_cli(stand_in, out)
    pid_file = out / "gamma-0.999-info-seed1" / "pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), process.stderr.read() if process.poll() is not None else "no child"
    child = int(pid_file.read_text())
    process.send_signal(stop)
    process.communicate(timeout=60)
    assert process.returncode == 130
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the training child was stopped too
    state = SweepState.load(out / STATE_FILE)
    run = state.run("gamma-0.999-info-seed1")
    assert run.status == "pending" and run.phases[0].note == "interrupted (Ctrl-C or SIGTERM)"
    assert run.phases[0].pid is None and run.attempts == 1
    assert [r.status for r in state.runs[1:]] == ["pending"] * 3

    stand_in.configure()
    resumed = run_sweep_cli(stand_in, out)
    assert resumed.returncode == 0, resumed.stderr
    assert set(statuses(out).values()) == {"done"}
    again = [c for c in stand_in.calls() if "gamma-0.999-info-seed1" in c[c.index("--output-dir") + 1]]
    assert len(again) == 2 and request_of(again[-1][1:]).resume


@pytest.mark.slow
def test_a_sigkilled_sweep_leaves_a_state_that_the_next_one_completes_without_duplicates(
    tmp_path: Path, stand_in: StandIn
) -> None:
    out = tmp_path / "sweep"
    release = tmp_path / "release"
    stand_in.configure(hold=str(release))
    process = sweep_cli(stand_in, out)
    pid_file = out / "gamma-0.999-info-seed1" / "pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), process.poll()
    process.send_signal(signal.SIGKILL)  # no handler runs: the child and the lock file are left behind
    process.wait()
    child = int(pid_file.read_text())
    os.kill(child, 0)  # still training in its own session

    refused = run_sweep_cli(stand_in, out)
    assert refused.returncode == 2 and f"still running as process {child}" in refused.stderr
    assert "took over" in refused.stderr and "no longer running" in refused.stderr  # the killed sweep's lock
    release.write_text("go")
    deadline = time.monotonic() + 60
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)

    resumed = run_sweep_cli(stand_in, out)
    assert resumed.returncode == 0, resumed.stderr
    assert set(statuses(out).values()) == {"done"}
    trained = output_dirs(stand_in.calls())
    assert sorted(set(trained)) == sorted(statuses(out))
    assert trained.count("gamma-0.999-info-seed1") == 2 and len(trained) == 5  # only the killed one again
    metrics = (out / "gamma-0.999-info-seed1" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in metrics] == [1, 2, 3]


def test_a_run_left_running_by_a_killed_sweep_is_marked_and_run_again(
    tmp_path: Path, stand_in: StandIn
) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["batch"])
    state, _ = open_sweep(plan, command=[], settings={})
    run = state.runs[0]
    state.start_phase(run, run.phases[0], launch_argv(run, run.phases[0]), "train.log", new_attempt=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    state.record_handle(run.phases[0], pid=dead.pid)

    outcome = run_sweep(state, [run.name], LocalLauncher(stand_in.executable), poll_interval=0.05)
    assert outcome.done == [run.name] and outcome.failed == []
    assert run.status == "done" and run.attempts == 2
    assert output_dirs(stand_in.calls()) == [run.name]


def test_a_run_still_running_elsewhere_is_not_started_twice(tmp_path: Path, stand_in: StandIn) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["batch"])
    state, _ = open_sweep(plan, command=[], settings={})
    run = state.runs[0]
    state.start_phase(run, run.phases[0], launch_argv(run, run.phases[0]), "train.log", new_attempt=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", run.output_dir])
    try:
        state.record_handle(run.phases[0], pid=alive.pid)
        with pytest.raises(Exception, match=f"still running as process {alive.pid}"):
            run_sweep(state, [run.name], LocalLauncher(stand_in.executable), poll_interval=0.05)
    finally:
        alive.kill()
        alive.wait()
    assert stand_in.calls() == []


def test_a_local_sweep_will_not_restart_a_run_that_is_a_ray_job(tmp_path: Path, stand_in: StandIn) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["batch"])
    state, _ = open_sweep(plan, command=[], settings={})
    run = state.runs[0]
    state.start_phase(run, run.phases[0], launch_argv(run, run.phases[0]), "train.log", new_attempt=True)
    state.record_handle(run.phases[0], job_id="infoppo-x-norm-batch-info-seed1-train-1")
    with pytest.raises(Exception, match="re-run with that --ray-dashboard to re-attach"):
        run_sweep(state, [run.name], LocalLauncher(stand_in.executable), poll_interval=0.05)
    assert stand_in.calls() == [] and SweepState.load(state.path).runs[0].status == "running"


@pytest.mark.slow
def test_a_failed_run_is_summed_up_by_its_own_error_line_not_its_exit_code(
    tmp_path: Path, stand_in: StandIn
) -> None:
    out = tmp_path / "sweep"
    stand_in.configure(
        fail=["gamma-0.99-token"],
        fail_message="\x1b[1;31merror:\x1b[0m CUDA out of memory on GPU 3; lower train.micro_batch_size",
        fail_after="\x1b[36m(raylet)\x1b[0m \x1b[33mworker 17 exited\x1b[0m",
    )
    result = run_sweep_cli(stand_in, out)
    assert result.returncode == 1
    error = "error: CUDA out of memory on GPU 3; lower train.micro_batch_size"
    run = SweepState.load(out / STATE_FILE).run("gamma-0.99-token-seed1")
    assert run.error == f"train exited with code 1: {error}"
    progress, table = " ".join(result.stderr.split()), " ".join(result.stdout.split())
    assert f"failed gamma-0.99-token-seed1: train exited with code 1: {error}" in progress
    assert f"│ train exited with code 1: {error} │" in table and "\x1b" not in result.stdout
    assert "worker 17 exited" not in progress + table


@pytest.mark.slow
def test_a_sweep_directory_moved_between_runs_resumes_where_it_now_is(
    tmp_path: Path, stand_in: StandIn
) -> None:
    old, new = tmp_path / "sweep", tmp_path / "moved"  # the same --data (tmp_path/prompts.jsonl) for both
    stand_in.configure(fail=["gamma-0.99-token"])
    assert run_sweep_cli(stand_in, old).returncode == 1
    old.rename(new)
    stand_in.configure()
    resumed = run_sweep_cli(stand_in, new, "--retry-failed")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming (moved from {old}): 3 done (skipped), 1 failed, retrying" in resumed.stdout
    again = stand_in.calls()[4:]
    assert [call[call.index("--output-dir") + 1] for call in again] == [str(new / "gamma-0.99-token-seed1")]
    assert request_of(again[0][1:]).resume and set(statuses(new).values()) == {"done"}
    assert str(old) not in (new / STATE_FILE).read_text()


# --------------------------------------------------------------------------- Ray jobs

RAY_CLUSTER = r"""
import json, sys, ray
from ray._private import parameter

# Jobs are submitted through the job agent's HTTP port. Ray's default, 52365, is taken while another Ray
# runs on this machine (an `infoppo train`'s embedded one), and the agent then serves no jobs ("No
# available agent to submit job"); 0 picks a free one. ray.init has no option for it (`ray start` has).
class FreeAgentPort(parameter.RayParams):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("dashboard_agent_listen_port", 0)
        super().__init__(*args, **kwargs)

parameter.RayParams = FreeAgentPort
ctx = ray.init(num_cpus=1, include_dashboard=True, dashboard_host="127.0.0.1",
               dashboard_port=int(sys.argv[1]), log_to_driver=False)
print(json.dumps({"dashboard": "http://" + ctx.dashboard_url}), flush=True)
sys.stdin.read()  # until the test closes our stdin
ray.shutdown()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ray_dashboard(request: pytest.FixtureRequest):
    """A private local Ray (1 CPU, dashboard and job agent) in a child process, stopped afterwards.
    Its folder is a short one under /tmp: Ray's socket paths (at most 107 bytes) would not fit under
    pytest-xdist's temporary folders."""
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    env = {**os.environ, "RAY_TMPDIR": str(temp), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)  # never join someone else's cluster
    script = temp / "cluster.py"
    script.write_text(RAY_CLUSTER)
    with open(temp / "cluster.err", "w") as errors:
        process = subprocess.Popen(
            [sys.executable, str(script), str(free_port())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=env,
            start_new_session=True,
        )
        try:
            line = process.stdout.readline()
            if not line:
                pytest.fail(f"local Ray did not start: {(temp / 'cluster.err').read_text()[-2000:]}")
            yield json.loads(line)["dashboard"]
        finally:
            process.stdin.close()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.mark.slow
def test_ray_jobs_run_the_grid_in_parallel_and_their_logs_are_collected(
    tmp_path: Path, stand_in: StandIn, ray_dashboard: str
) -> None:
    stand_in.configure(fail=["gamma-0.99-info"])
    plan = build_plan(
        "gamma", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["0.999,0.99"], time="info",
        eval_benches=("aime24",),
    )  # fmt: skip
    state, _ = open_sweep(plan, command=[], settings={})
    launcher = RayJobLauncher(ray_dashboard, state.sweep_id, executable=stand_in.executable)
    names = [point.name for point in plan.points]
    started = time.monotonic()
    outcome = run_sweep(state, names, launcher, max_parallel=2, poll_interval=0.2)
    elapsed = time.monotonic() - started
    assert outcome.done == ["gamma-0.999-info-seed1"] and outcome.failed == ["gamma-0.99-info-seed1"]

    done = state.run("gamma-0.999-info-seed1")
    assert [phase.status for phase in done.phases] == ["done", "done"]
    job_ids = [phase.ray_job_id for phase in done.phases]
    assert job_ids == [
        f"infoppo-{state.sweep_id}-{done.name}-train-1",
        f"infoppo-{state.sweep_id}-{done.name}-eval-1",
    ]
    train_log = (Path(done.output_dir) / "train.log").read_text()
    assert f"stand-in training {done.name}" in train_log and "Ray job" in train_log
    assert "stand-in eval done" in (Path(done.output_dir) / "eval.log").read_text()
    assert request_of(done.phase("train").launched).address == "auto"

    failed = state.run("gamma-0.99-info-seed1")
    assert failed.phase("train").exit_code == 1 and failed.phase("eval").status == "pending"
    assert "stand-in failure" in (Path(failed.output_dir) / "train.log").read_text()
    assert "FAILED" in failed.error and "\n" not in failed.error  # Ray's message, not the logs it quotes
    on_disk = SweepState.load(state.path)
    assert on_disk.run(done.name).status == "done" and on_disk.run(failed.name).status == "failed"
    print(f"two Ray grid points (train + eval) took {elapsed:.1f} s")


@pytest.mark.slow
def test_a_sweep_re_attaches_to_a_ray_job_that_outlived_it(
    tmp_path: Path, stand_in: StandIn, ray_dashboard: str
) -> None:
    stand_in.configure(sleep=2)
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["sentence"])
    state, _ = open_sweep(plan, command=[], settings={})
    run = state.runs[0]
    launcher = RayJobLauncher(ray_dashboard, state.sweep_id, executable=stand_in.executable)
    phase = run.phases[0]
    # What a sweep killed right after submitting leaves behind: the phase running, its job on the cluster.
    state.start_phase(run, phase, launch_argv(run, phase), "train.log", new_attempt=True)
    handle = launcher.start(
        run, phase, launch_argv(run, phase, in_ray_job=True), Path(run.output_dir) / "train.log"
    )
    state.record_handle(phase, job_id=handle.job_id)

    resumed = SweepState.load(state.path)
    outcome = run_sweep(resumed, [run.name], launcher, poll_interval=0.2)
    assert outcome.done == [run.name]
    assert len(stand_in.calls()) == 1  # attached, not submitted again
    record = resumed.run(run.name)
    assert record.attempts == 1 and record.phases[0].ray_job_id == handle.job_id
    assert "stand-in training" in (Path(run.output_dir) / "train.log").read_text()


@pytest.mark.slow
def test_a_submission_cut_short_by_ctrl_c_is_found_or_run_again(
    tmp_path: Path, stand_in: StandIn, ray_dashboard: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["global"])
    state, _ = open_sweep(plan, command=[], settings={})
    launcher = RayJobLauncher(ray_dashboard, state.sweep_id, executable=stand_in.executable)

    def interrupted_submit(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(launcher._client, "submit_job", interrupted_submit)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(state, [state.runs[0].name], launcher, poll_interval=0.2)
    run = SweepState.load(state.path).runs[0]
    assert run.status == "running" and run.phases[0].ray_job_id == launcher.job_id_for(run, run.phases[0])

    monkeypatch.undo()
    resumed = SweepState.load(state.path)
    outcome = run_sweep(resumed, [run.name], launcher, poll_interval=0.2)
    assert outcome.done == [run.name]  # the job was never submitted: it ran as a second attempt
    assert resumed.runs[0].attempts == 2 and resumed.runs[0].phases[0].ray_job_id.endswith("-train-2")
    assert len(stand_in.calls()) == 1


@pytest.mark.slow
def test_cli_ray_sweep_left_by_ctrl_c_keeps_its_jobs_and_re_attaches(
    tmp_path: Path, stand_in: StandIn, ray_dashboard: str
) -> None:
    out = tmp_path / "sweep"
    release = tmp_path / "release"
    stand_in.configure(hold=str(release))
    ray_options = ("--time", "info", "--ray-dashboard", ray_dashboard, "--max-parallel", "2")
    process = sweep_cli(stand_in, out, *ray_options)
    deadline = time.monotonic() + 60
    while len(stand_in.calls()) < 2 and time.monotonic() < deadline:  # both jobs are training
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    state = SweepState.load(out / STATE_FILE)
    running = [run for run in state.runs if run.status == "running"]
    assert len(running) == 2 and all(run.phases[0].ray_job_id for run in running)
    assert "2 job(s) keep running" in stdout and "re-run to re-attach" in stdout

    release.touch()
    resumed = run_sweep_cli(stand_in, out, *ray_options)
    assert resumed.returncode == 0, resumed.stderr
    assert set(statuses(out).values()) == {"done"}
    assert "re-attached to gamma-0.999-info-seed1 train" in resumed.stderr
    trains = output_dirs(stand_in.calls())
    assert sorted(trains) == sorted(statuses(out))  # each grid point trained exactly once
    for run in SweepState.load(out / STATE_FILE).runs:
        assert run.attempts == 1 and request_of(run.phases[0].launched).address == "auto"


def test_an_unreachable_ray_address_is_an_environment_problem() -> None:
    with pytest.raises(EnvironmentProblem, match=r"cannot reach the Ray cluster at http://127.0.0.1:\d+"):
        RayJobLauncher(f"http://127.0.0.1:{free_port()}", "abcd1234")


class EndlessJobs:
    """A launcher whose phases run until stopped, and are left running by a Ctrl-C (as Ray jobs are).
    Its first poll lets the garbage collector's finalizer receive the Ctrl-C, where Python prints the
    KeyboardInterrupt as "ignored" instead of raising it."""

    description = "endless jobs"
    in_ray_job = False
    poll_interval = 0.01

    def __init__(self) -> None:
        self.polls = 0

    def job_id_for(self, run, phase):
        return None

    def start(self, run, phase, argv, log_path):
        return Handle(run=run, phase=phase, log_path=log_path)

    def attach(self, run, phase, log_path):
        return None

    def poll(self, handle):
        self.polls += 1
        assert self.polls < 100, "the sweep went on waiting for its runs after Ctrl-C"
        if self.polls == 1:
            holder = type("Holder", (), {})()
            weakref.finalize(holder, lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(0.2)))
            del holder  # the finalizer runs here, and the interrupt lands inside it
        return None

    def interrupt(self, handle):
        return False


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # Python's "ignored" report
def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_the_sweep(tmp_path: Path) -> None:
    plan = build_plan("gamma", preset="qwen3-4b", out_dir=tmp_path / "sw", values=["0.999"])
    state, _ = open_sweep(plan, command=SweepRequest().resume_command(plan), settings=plan.settings())
    launcher = EndlessJobs()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(state, [run.name for run in state.runs], launcher, max_parallel=2)
    assert launcher.polls == len(state.runs)  # each run polled once: stopped at the loop's next turn
    saved = SweepState.load(state.path)
    assert {run.status for run in saved.runs} == {"running"}  # left running, to re-attach to
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back
