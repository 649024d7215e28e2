"""SLURM sweeps through submitit's local executor: the same submission, job-id tracking, re-attachment and
in-job Ray start as on a cluster, with the stand-in `infoppo` and a stand-in `ray` that records its calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_stand_in import StandIn, write_prompts
from train_command_line import request_of

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.launcher import EXECUTABLE_ENV
from infoppo_cli.sweep.request import slurm_minutes
from infoppo_cli.sweep.slurm import LOCAL_EXECUTOR_ENV, RAY_ENV, SLURM_DIR, SlurmSettings
from infoppo_cli.sweep.state import STATE_FILE, SweepState

RAY_STAND_IN = """
import json, sys
with open(sys.argv[0] + ".calls", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
"""


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("48:00:00", 2880), ("30", 30), ("1-00:00:00", 1440), ("2-12", 3600), ("00:30:01", 31), ("10:30", 11)],
)
def test_slurm_time_limits_are_read_as_sbatch_reads_them(text: str, minutes: int) -> None:
    assert slurm_minutes(text) == minutes


@pytest.mark.parametrize("text", ["", "two days", "0", "1:2:3:4", "-5"])
def test_bad_slurm_time_limits_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--slurm-time"):
        slurm_minutes(text)


def test_executor_parameters_ask_for_one_ray_node_per_slurm_node() -> None:
    settings = SlurmSettings(partition="gpu", time="12:00:00", nodes=2, gpus_per_node=8, account="lab")
    assert settings.executor_parameters("job") == {
        "name": "job",
        "timeout_min": 720,
        "nodes": 2,
        "gpus_per_node": 8,
        "tasks_per_node": 1,
        "slurm_partition": "gpu",
        "slurm_account": "lab",
    }


def slurm_sweep(
    stand_in: StandIn,
    out: Path,
    *extra: str,
    ray_script: str = RAY_STAND_IN,
    local: bool = True,
    path: str = "",
) -> subprocess.Popen[str]:
    """``infoppo sweep norm --launcher slurm`` in a child process: with ``local``, submitit's local executor
    stands in for SLURM (the tests' switch); ``path`` replaces PATH when given."""
    ray = out.parent / "ray_stand_in.py"
    ray.write_text(ray_script)
    env = {**os.environ, EXECUTABLE_ENV: " ".join(stand_in.executable), "COLUMNS": "200"}
    env[RAY_ENV] = f"{sys.executable} {ray}"
    env.pop(LOCAL_EXECUTOR_ENV, None)
    if local:
        env[LOCAL_EXECUTOR_ENV] = "1"
    if path:
        env["PATH"] = path
    argv = [sys.executable, "-m", "infoppo_cli", "sweep", "norm", "--values", "batch,global"]
    prompts = write_prompts(out.parent / "p.jsonl")
    argv += ["--out", str(out), "--poll-interval", "0.1", "--data", str(prompts)]
    argv += ["--launcher", "slurm", "--slurm-gpus-per-node", "0", *extra]
    argv += ["--eval-bench", "none"]  # the AIME sets are not cached on a test machine
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=out.parent
    )


def finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    stdout, stderr = process.communicate(timeout=180)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.slow
def test_a_slurm_sweep_runs_each_phase_as_a_job_with_its_own_ray_cluster(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    out = tmp_path / "sweep"
    result = finish(slurm_sweep(stand_in, out, "--final-eval-bench", "aime24"))
    assert result.returncode == 0, result.stdout + result.stderr
    state = SweepState.load(out / STATE_FILE)
    assert {run.status for run in state.runs} == {"done"}
    job_ids = [phase.slurm_job_id for run in state.runs for phase in run.phases]
    assert all(job_ids) and len(set(job_ids)) == 4  # train and eval of two runs: four jobs
    assert all((out / SLURM_DIR / job_id).is_dir() for job_id in job_ids)  # submitit's own files
    trains = [call for call in stand_in.calls() if call[0] == "train"]
    assert len(trains) == 2 and all(request_of(call[1:]).address == "auto" for call in trains)
    ray_calls = [json.loads(line) for line in (tmp_path / "ray_stand_in.py.calls").read_text().splitlines()]
    assert sorted(ray_calls) == [["start", "--head", "--port", "6379"]] * 2 + [["stop"]] * 2  # trains only
    log = (out / "norm-batch-info-seed1" / "train.log").read_text()
    assert "stand-in training norm-batch-info-seed1" in log and "SLURM job" in log
    assert "--launcher slurm" in " ".join(state.command)


@pytest.mark.slow
def test_a_slurm_sweep_that_was_killed_re_attaches_to_its_jobs(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    release = tmp_path / "release"
    stand_in.configure(hold=str(release))
    out = tmp_path / "sweep"
    process = slurm_sweep(stand_in, out, "--max-parallel", "2")
    pids = [out / name / "pid" for name in ("norm-batch-info-seed1", "norm-global-info-seed1")]
    deadline = time.monotonic() + 120
    while not all(pid.exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(pid.exists() for pid in pids), process.poll()
    process.send_signal(signal.SIGKILL)
    process.wait()
    state = SweepState.load(out / STATE_FILE)
    assert {run.status for run in state.runs} == {"running"}
    assert all(run.phases[0].slurm_job_id for run in state.runs)

    release.write_text("go")
    result = finish(slurm_sweep(stand_in, out, "--max-parallel", "2"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (result.stdout + result.stderr).count("re-attached to") == 2
    assert len([call for call in stand_in.calls() if call[0] == "train"]) == 2  # nothing submitted twice
    assert {run.status for run in SweepState.load(out / STATE_FILE).runs} == {"done"}


@pytest.mark.slow
def test_slurm_dry_run_prints_what_would_be_submitted(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    out = tmp_path / "sweep"
    extra = ["--dry-run", "--slurm-partition", "gpu", "--slurm-time", "12:00:00", "--slurm-nodes", "2"]
    result = finish(slurm_sweep(stand_in, out, *extra))
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "as SLURM jobs (partition gpu, time 12:00:00, 2 node(s) x 0 GPU(s)), at most 2 at once" in text
    assert text.count("--address auto") == 2 and not out.exists()


class FakeJobEnvironment:
    """What submitit tells the job body on each node of a two-node allocation."""

    def __init__(self, rank: int) -> None:
        self.hostnames = ["gpu-node-0", "gpu-node-1"]
        self.global_rank = rank
        self.num_nodes = 2


RAY_STATUS_STAND_IN = (
    RAY_STAND_IN
    + """
if sys.argv[1:] == ["status"]:
    print("Active:\\n 1 node_aaaa\\n 1 node_bbbb")
"""
)


@pytest.mark.parametrize("rank", [0, 1])
def test_a_two_node_job_forms_one_ray_cluster_and_runs_train_on_the_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rank: int
) -> None:
    import submitit

    from infoppo_cli.sweep.slurm import run_phase_in_job

    ray = tmp_path / "ray.py"
    ray.write_text(RAY_STATUS_STAND_IN)
    monkeypatch.setenv(RAY_ENV, f"{sys.executable} {ray}")
    monkeypatch.setattr(submitit, "JobEnvironment", lambda: FakeJobEnvironment(rank))
    log = tmp_path / "train.log"
    command = [sys.executable, "-c", "import os; print('RAY_ADDRESS=' + os.environ['RAY_ADDRESS'])"]
    assert run_phase_in_job(command, str(log), start_ray=True) == 0
    calls = [json.loads(line) for line in Path(f"{ray}.calls").read_text().splitlines()]
    if rank == 0:
        assert calls == [["start", "--head", "--port", "6379"], ["status"], ["stop"]]
        assert "RAY_ADDRESS=gpu-node-0:6379" in log.read_text()
    else:
        assert calls == [["start", "--address", "gpu-node-0:6379", "--block"]] and not log.exists()


def test_a_local_sweep_will_not_restart_a_run_that_is_a_slurm_job(tmp_path: Path) -> None:
    from infoppo_cli.sweep.grid import build_plan
    from infoppo_cli.sweep.local import LocalLauncher
    from infoppo_cli.sweep.runner import run_sweep
    from infoppo_cli.sweep.state import open_sweep

    stand_in = StandIn(tmp_path / "bin")
    plan = build_plan("norm", preset="qwen3-4b", out_dir=tmp_path / "sweep", values=["batch"])
    state, _ = open_sweep(plan, command=[], settings={})
    run = state.runs[0]
    state.start_phase(run, run.phases[0], ["infoppo", "train"], "train.log", new_attempt=True)
    state.record_handle(run.phases[0], slurm_job_id="4242")
    with pytest.raises(UsageError, match="SLURM job 4242 .* re-run with --launcher slurm .*scancel 4242"):
        run_sweep(state, [run.name], LocalLauncher(stand_in.executable), poll_interval=0.05)
    assert stand_in.calls() == [] and SweepState.load(state.path).runs[0].status == "running"


# --------------------------------------------------------------------------- no SLURM here: refuse


def fake_programs(directory: Path, **scripts: str) -> str:
    """A directory of shell scripts named like SLURM's programs (and nothing else): a PATH of its own."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in scripts.items():
        program = directory / name
        program.write_text(f"#!/bin/sh\n{body}\n")
        program.chmod(0o755)
    return str(directory)


WORKING = "echo 'slurm 23.02.7'; exit 0"
UNREACHABLE = (
    "echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller' >&2; exit 1"
)


@pytest.mark.parametrize(
    ("programs", "refusal"),
    [
        (
            {},
            "error: --launcher slurm: sbatch is not on PATH, so this machine cannot reach SLURM; "
            "nothing was submitted",
        ),
        (
            {"sbatch": UNREACHABLE},
            "error: --launcher slurm: `sbatch --version` failed (exit 1): sbatch: error: Batch job "
            "submission failed: Unable to contact slurm controller; nothing was submitted",
        ),
        (
            {
                "sbatch": WORKING,
                "squeue": "echo 'squeue: error: slurm_load_jobs error: Unable to contact' >&2; exit 1",
            },
            "error: --launcher slurm: `squeue --noheader --format=%i --user=",
        ),
        ({"sbatch": WORKING, "squeue": WORKING}, "error: --launcher slurm: srun is not on PATH"),
    ],
    ids=["no-sbatch", "sbatch-fails", "squeue-fails", "no-srun"],
)
@pytest.mark.slow
def test_a_slurm_sweep_where_slurm_is_not_reachable_refuses_and_starts_nothing(
    tmp_path: Path, programs: dict[str, str], refusal: str
) -> None:
    stand_in = StandIn(tmp_path / "bin")
    out = tmp_path / "sweep"
    path = fake_programs(tmp_path / "slurm-bin", **programs)
    result = finish(slurm_sweep(stand_in, out, local=False, path=path))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(refusal), result.stderr
    assert "Running" not in result.stdout and "SLURM job" not in result.stdout
    assert not out.exists() and stand_in.calls() == []  # no sweep directory, no job, no train


def test_the_slurm_launcher_itself_refuses_and_never_falls_back_to_local_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infoppo_cli.errors import EnvironmentProblem
    from infoppo_cli.sweep.slurm import SlurmLauncher

    monkeypatch.delenv(LOCAL_EXECUTOR_ENV, raising=False)
    monkeypatch.setenv("PATH", fake_programs(tmp_path / "none"))
    with pytest.raises(EnvironmentProblem, match="sbatch is not on PATH"):
        SlurmLauncher(tmp_path / "sweep", SlurmSettings())
    monkeypatch.setenv("PATH", fake_programs(tmp_path / "ok", sbatch=WORKING, squeue=WORKING, srun=WORKING))
    launcher = SlurmLauncher(tmp_path / "sweep", SlurmSettings())
    assert launcher.cluster == "slurm" and type(launcher._executor._executor).__name__ == "SlurmExecutor"
    assert "local executor" not in launcher.description
    monkeypatch.setenv(LOCAL_EXECUTOR_ENV, "1")  # the tests' switch, and nothing else, picks local jobs
    local = SlurmLauncher(tmp_path / "sweep", SlurmSettings())
    assert local.cluster == "local" and f"{LOCAL_EXECUTOR_ENV}=1" in local.description


@pytest.mark.slow
def test_a_slurm_dry_run_without_slurm_previews_and_says_a_real_run_would_be_refused(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    out = tmp_path / "sweep"
    result = finish(slurm_sweep(stand_in, out, "--dry-run", local=False, path=fake_programs(tmp_path / "e")))
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    note = "note: --launcher slurm: sbatch is not on PATH, so this machine cannot reach SLURM; "
    assert note + "a real run would be refused here" in text
    assert not out.exists() and stand_in.calls() == []


RAY_STOP_IN_COLOUR = (
    RAY_STAND_IN
    + """
if sys.argv[1:] == ["stop"]:
    print("\\x1b[32mStopped all 7 Ray processes.\\x1b[0m", flush=True)
"""
)


@pytest.mark.slow
def test_a_failed_slurm_point_is_summed_up_by_the_train_s_own_error_line(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    stand_in.configure(
        fail=["norm-global"],
        fail_message="\x1b[1;31merror:\x1b[0m data file /data/x.jsonl not found; check the path",
        fail_after="\x1b[36m(raylet)\x1b[0m worker exited",
    )
    out = tmp_path / "sweep"
    result = finish(slurm_sweep(stand_in, out, ray_script=RAY_STOP_IN_COLOUR))
    assert result.returncode == 1, result.stdout + result.stderr
    run = SweepState.load(out / STATE_FILE).run("norm-global-info-seed1")
    assert run.error == "train exited with code 1: error: data file /data/x.jsonl not found; check the path"
    text = " ".join(result.stdout.split())
    assert "error: data file /data/x.jsonl not found" in text and "\x1b" not in result.stdout
    assert "Stopped all 7 Ray processes" in (out / "norm-global-info-seed1" / "train.log").read_text()
