"""The run's output: all of it into `train.log`, the per-step lines and the user's lines on the terminal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from infoppo_cli.openrlhf_adapter.progress import MARKER
from infoppo_cli.train.output import TrainOutput, child_env


class Seen:
    """A watcher that keeps what it is shown."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.lines: list[str] = []

    def event(self, event, line, left) -> None:
        self.events.append(event)
        if line:
            self.lines.append(line)

    def output(self, line: str) -> None:
        self.lines.append(line)


def event_line(**event) -> str:
    return f"\x1b[36m(InfoPPOTrainer pid=9)\x1b[0m {MARKER}{json.dumps(event)}"


CHILD_LINES = [
    "2026-01-01 INFO worker.py -- Started a local Ray instance.",
    "namespace(ds=namespace(zero_stage=2, param_dtype='bf16'), vllm=namespace(sync_backend='nccl'))",
    "\x1b[36m(CpuPolicyModelActor pid=7)\x1b[0m forward:   0%|     | 0/8 [00:00<?, ?it/s]",
    event_line(event="start", step=0, steps=2, evals_left=0),
    event_line(event="phase", phase="generate", step=1, done=0, total=16),
    event_line(event="step", step=1, steps=2, seconds=3.0, reward=0.5, evals_left=0),
    "\x1b[36m(CpuRolloutEngine pid=8)\x1b[0m WARNING infoppo reward: 3 of 128 responses timed out",
    event_line(event="step", step=2, steps=2, seconds=2.0, reward=0.6, evals_left=0),
]


def child(lines: list[str], code: int = 0) -> list[str]:
    script = f"import sys\nfor line in {lines!r}:\n    print(line, flush=True)\nsys.exit({code})"
    return [sys.executable, "-c", script]


def run_child(log: Path, watcher: Seen, lines: list[str], code: int = 0, verbose: bool = False) -> int:
    with TrainOutput(log, watcher, verbose) as output:
        output.begin(["launch", "--flag"], resumed=False)
        process = subprocess.Popen(
            child(lines, code), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=child_env({})
        )
        code = output.pump(process)
        output.end(code, "finished" if code == 0 else "failed")
    return code


def test_everything_goes_to_the_log_and_the_terminal_gets_the_steps_and_the_user_s_lines(tmp_path):
    seen = Seen()
    log = tmp_path / "train.log"
    assert run_child(log, seen, CHILD_LINES) == 0
    text = log.read_text()
    assert text.startswith("--- infoppo train started ") and "launch --flag" in text.splitlines()[0]
    assert "Started a local Ray instance." in text and "zero_stage=2" in text  # upstream's output, all of it
    assert "\x1b[" not in text and MARKER not in text  # no colour codes, no raw events
    assert "forward:   0%" not in text  # an unfinished bar's drawing is not worth a line
    assert "step 1/2  reward 0.500  took 3.0s  left ~3.0s" in text and "step 2/2" in text
    assert re.search(r"--- infoppo train finished \S+ \(exit code 0\)\n$", text)
    assert seen.lines == [
        "training started: 2 RL steps in all",
        "step 1/2  reward 0.500  took 3.0s  left ~3.0s",
        "(CpuRolloutEngine pid=8) WARNING infoppo reward: 3 of 128 responses timed out",
        "step 2/2  reward 0.600  took 2.0s",
    ]
    assert [event["event"] for event in seen.events] == ["start", "phase", "step", "step"]


def test_verbose_shows_every_line_and_a_failure_shows_the_end_of_the_log(tmp_path):
    verbose = Seen()
    run_child(tmp_path / "a" / "train.log", verbose, CHILD_LINES, verbose=True)
    assert any("zero_stage=2" in line for line in verbose.lines)
    quiet = Seen()
    lines = ["Traceback (most recent call last):", '  File "x.py", line 1', "RuntimeError: out of memory"]
    assert run_child(tmp_path / "b" / "train.log", quiet, lines, code=3) == 3
    assert quiet.lines[0] == f"the last lines of {tmp_path / 'b' / 'train.log'}:"
    assert quiet.lines[-2:] == [
        "  RuntimeError: out of memory",
        "error: training stopped with exit code 3: RuntimeError: out of memory",  # the sweep's reason
    ]


def test_a_resumed_run_appends_to_its_log(tmp_path):
    log = tmp_path / "train.log"
    run_child(log, Seen(), ["first"])
    run_child(log, Seen(), ["second"])
    text = log.read_text()
    assert text.index("first") < text.index("second") and text.count("--- infoppo train started") == 2


def test_under_a_sweep_the_log_is_standard_output_and_gets_each_line_once(tmp_path, monkeypatch):
    log = tmp_path / "train.log"
    log.write_text("=== infoppo sweep: run-a train, attempt 1\n")
    with open(log, "a", encoding="utf-8") as stdout:  # what the sweep hands `infoppo train`
        monkeypatch.setattr(sys, "stdout", stdout)
        seen = Seen()
        run_child(log, seen, CHILD_LINES)
    assert seen.lines.count("step 1/2  reward 0.500  took 3.0s  left ~3.0s") == 1  # the watcher writes it
    assert any("zero_stage=2" in line for line in seen.lines)  # ...and every other line, once
    assert log.read_text().count("step 1/2") == 0  # nothing written behind the watcher's back


def test_no_secret_of_the_launch_s_environment_reaches_the_log(tmp_path):
    from infoppo_cli.train.output import secret_values

    env = {"WANDB_API_KEY": "sekret-key-1234", "RAY_AUTH_TOKEN": "ab" * 16, "HOME": "/root", "X": ""}
    secrets = secret_values(env)
    assert sorted(secrets) == sorted(["sekret-key-1234", "ab" * 16])
    seen = Seen()
    with TrainOutput(tmp_path / "train.log", seen, verbose=True, secrets=secrets) as output:
        output.take(b"wandb: key=sekret-key-1234 token " + b"ab" * 16 + b"\n")
    text = (tmp_path / "train.log").read_text()
    assert "sekret" not in text and "ab" * 16 not in text and "key=<redacted>" in text
    assert seen.lines == ["wandb: key=<redacted> token <redacted>"]


def test_the_child_runs_unbuffered_without_ray_s_deduplication_or_bars():
    env = child_env({"PATH": "/bin"})
    assert env["PATH"] == "/bin" and env["PYTHONUNBUFFERED"] == "1"
    assert env["RAY_DEDUP_LOGS"] == "0" and env["TQDM_DISABLE"] == "1"


FULL_FILE = "/runs/r/ckpt/_actor/global_step2/mp_rank_00_model_states.pt"


class _FullDiskLog:
    """``train.log`` on a disk that fills after ``room`` lines: each later write raises ENOSPC."""

    def __init__(self, room: int) -> None:
        self.room, self.lines = room, []

    def write(self, text: str) -> None:
        if len(self.lines) >= self.room:
            raise OSError(28, "No space left on device")
        self.lines.append(text)

    def close(self) -> None:
        raise OSError(28, "No space left on device")  # the line it still held


def test_a_full_disk_is_one_error_line_with_the_path_and_the_space_and_the_run_goes_on(tmp_path):
    """A full disk made the launch process's log writes raise (a traceback, the manifest left
    "running"); the run's own checkpoint write that found it full says where."""
    seen = Seen()
    lines = [
        *CHILD_LINES,
        "Traceback (most recent call last):",
        f"OSError: [Errno 28] No space left on device: '{FULL_FILE}'",
    ]
    output = TrainOutput(tmp_path / "train.log", seen, disk_needed=48e6)
    with output:
        output.log = _FullDiskLog(room=3)
        process = subprocess.Popen(
            child(lines, 1), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=child_env({})
        )
        code = output.pump(process)  # no exception: every line is read, the steps shown
        output.end(code, "failed")
    assert code == 1 and "step 2/2  reward 0.600  took 2.0s" in seen.lines
    assert not [line for line in seen.lines if "Traceback" in line]  # the error line says it all
    error = seen.lines[-1]
    assert error.startswith("error: training stopped with exit code 1: no space left on the device of ")
    assert FULL_FILE in error
    assert "the run at its peak needs about 48 MB" in error and " free there" in error and "--resume" in error
    assert output.log_failure is not None and output.log_failure.errno == 28


def test_a_log_that_cannot_be_written_is_named_when_the_child_does_not_say():
    output = TrainOutput(Path("/runs/r/train.log"), Seen())
    output.log_failure = OSError(28, "No space left on device")
    assert "device of /runs/r/train.log" in (output.full_disk() or "")
    output.log_failure = OSError(5, "Input/output error")
    assert output.full_disk() is None
