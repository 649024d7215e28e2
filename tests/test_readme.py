"""The README's commands, run as a new user runs them: the set-up commands exist, the quickstart works on
this CPU machine (its training runs shortened to 2 RL steps), and the GPU commands plan (``--dry-run``)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from cli_process import run_infoppo
from planned_run import assert_every_step_recorded, assert_the_planned_program_ran

from infoppo_cli.rundir import read_metrics

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
INFOPPO = ".venv/bin/infoppo"


def code_blocks() -> list[list[list[str]]]:
    """Each ```bash block of the README as its commands, each a list of words as the shell splits them
    (continuation lines joined, comments dropped)."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    parsed = []
    for block in blocks:
        joined = block.replace("\\\n", " ")
        commands = [shlex.split(line, comments=True) for line in joined.splitlines()]
        parsed.append([command for command in commands if command])
    return parsed


def infoppo_args(command: list[str]) -> list[str]:
    """The arguments of the README's ``.venv/bin/infoppo ...`` command (after any ``make ... &&``)."""
    words = command[command.index("&&") + 1 :] if "&&" in command else command
    assert words[0] == INFOPPO, command
    return words[1:]


def shortened(args: list[str]) -> list[str]:
    """A tiny-cpu training run cut to 2 RL steps and a small eval, so the test takes a minute."""
    if args[0] == "train" and "tiny-cpu" in args and "--dry-run" not in args:
        return [*args, "--steps", "2", "--eval-every", "1", "--eval-samples", "2"]
    return args


def test_the_readme_starts_with_the_two_set_up_commands():
    blocks = code_blocks()
    assert blocks[0] == [["make", "install", "&&", INFOPPO, "train", "--preset", "tiny-cpu"]]
    assert blocks[1] == [["make", "test"]]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^install:", makefile, re.M) and re.search(r"^test: lint", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")  # CI runs the README's command


@pytest.mark.slow
def test_the_quickstart_works_on_this_machine(tmp_path, task_cache):
    quickstart = code_blocks()[2]
    assert quickstart[0] == [INFOPPO, "train", "--preset", "tiny-cpu"]
    for command in quickstart:
        args = shortened(infoppo_args(command))
        done = run_infoppo(*args, cwd=tmp_path, timeout=900)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        if args[0] == "train" and "--dry-run" not in args:  # a run ends saying how far it got, how eval moved
            ended = r"finished: \S+/runs/tiny-cpu-[\w-]+-seed42 after 2 of 2 RL step\(s\)"
            assert re.search(ended, done.stdout), done.stdout[-1500:]
            assert re.search(r"arithmetic Mean@2: \d+\.\d at step 0 -> \d+\.\d at step 2", done.stdout)
    for method in ("infoppo", "ppo"):  # the quickstart's two runs are the end-to-end runs of both
        records = read_metrics(tmp_path / "runs" / f"tiny-cpu-{method}-seed42" / "metrics.jsonl")
        assert [r["step"] for r in records] == [0, 1, 2]
        assert all("eval_arithmetic" in record for record in records)
        assert_the_planned_program_ran(method, records)
        assert_every_step_recorded(method, records)
    run = tmp_path / "runs" / "tiny-cpu-infoppo-seed42"
    assert (run / "eval" / "metrics.json").is_file() and (
        tmp_path / "reports" / "tiny" / "report.md"
    ).is_file()
    assert (tmp_path / "reports" / "tiny-inspect" / "index.html").is_file()


@pytest.mark.slow
def test_the_gpu_commands_plan(tmp_path):
    source = tmp_path / "dapo-math-17k.jsonl"  # DAPO-Math-17K's layout, offline
    rows = [
        {
            "prompt": [{"role": "user", "content": f"What is {i} + {i}?"}],
            "reward_model": {"ground_truth": str(2 * i)},
        }
        for i in range(600)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    commands = code_blocks()[3]
    assert commands[0][:3] == ["make", "install-gpu", "&&"]
    for command in commands:
        args = infoppo_args(command)
        if args[:2] == ["data", "prep"]:
            args += ["--source", str(source)]
        elif args[0] in ("train", "sweep"):  # in-training eval off: the AIME sets are not cached here
            args += ["--dry-run", "--eval-bench", "none"]
        done = run_infoppo(*args, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr
