"""``infoppo sweep`` at the command line: what a dry run says before `data prep`, and the size of a grid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infoppo_cli.cli import main
from infoppo_cli.sweep.grid import MAX_RUNS, MAX_SEEDS
from infoppo_cli.sweep.request import SweepRequest


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "300")
    rows = (json.dumps({"prompt": f"What is {n}+1?", "label": str(n + 1)}) for n in range(512))
    (tmp_path / "prompts.jsonl").write_text("".join(row + "\n" for row in rows))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``infoppo ARGS``; a dry run with the runs' in-training eval off (the AIME sets are not cached on a
    test machine, and a dry run checks that they load: ``tests/train/test_preflight.py``)."""
    off = ["--eval-bench", "none"] if "--dry-run" in args and "--eval-bench" not in args else []
    with pytest.raises(SystemExit) as exited:
        main([*args, *off])
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), " ".join(out.split()), " ".join(err.split())


def test_a_dry_run_before_data_prep_notes_the_missing_file(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "sweep", "gamma", "--dry-run")
    assert code == 0, err
    default = workspace / "data" / "dapo-math-17k.jsonl"
    note = f"note: {default} does not exist yet: `infoppo data prep dapo-math-17k`"
    assert out.count(note) == 1 and "infoppo train --preset qwen3-4b" in out  # what `train --dry-run` says
    assert not (workspace / "sweeps").exists()


def test_a_real_sweep_without_data_is_refused_before_anything_is_made(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "sweep", "gamma")
    assert code == 2 and err.startswith("error: data file data/dapo-math-17k.jsonl not found")
    assert not (workspace / "sweeps").exists() and "Running" not in out + err


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (["--seeds", "1000000"], f"--seeds 1000000 asks for more than {MAX_SEEDS} seeds of every grid point"),
        (["--seeds", str(MAX_SEEDS + 1)], f"more than {MAX_SEEDS} seeds"),
        (
            ["--values", ",".join(f"0.9{n:03d}" for n in range(260)), "--seeds", "2"],
            f"the grid is 1040 training runs (260 value(s) x 2 arm(s) x 2 seed(s)), more than the {MAX_RUNS}",
        ),
    ],
    ids=["a million seeds", "one seed too many", "too many values"],
)
def test_a_grid_no_one_means_is_refused_at_once(
    workspace: Path, capsys: pytest.CaptureFixture[str], args: list[str], refusal: str
) -> None:
    code, out, err = run(capsys, "sweep", "gamma", "--dry-run", "--data", "prompts.jsonl", *args)
    assert code == 2 and err.startswith("error: ") and refusal in err and out == ""


def test_a_sweep_of_many_rounds_is_announced_before_any_work(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "sweep", "components", "--seeds", "3", "--dry-run", "--data", "prompts.jsonl"
    )
    assert code == 0
    assert err == (
        "warning: this sweep is 12 full training runs (1 value(s) x 4 arm(s) x 3 seed(s)), 1 at once: "
        "12 round(s) one after another, each as long as one training run"
    )
    code, out, err = run(capsys, "sweep", "gamma", "--dry-run", "--data", "prompts.jsonl")
    assert code == 0 and "warning" not in err  # the paper's 4-run grid is no surprise


def test_a_moved_sweep_previews_where_it_now_is(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from infoppo_cli.sweep.grid import build_plan
    from infoppo_cli.sweep.state import open_sweep

    plan = build_plan("norm", preset="qwen3-4b", out_dir=workspace / "old", values=["batch"])
    open_sweep(plan, command=SweepRequest().resume_command(plan), settings=plan.settings())
    (workspace / "old").rename(workspace / "new")
    code, out, err = run(
        capsys, "sweep", "norm", "--values", "batch", "--out", "new", "--dry-run", "--data", "prompts.jsonl"
    )
    assert code == 0, err
    state, old = workspace / "new" / "sweep.json", workspace / "old"
    assert f"note: {state} was written in {old}; its runs resume here" in out


def test_the_run_length_reaches_every_train_command(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "sweep",
        "methods",
        "--time",
        "infoppo,dapo",
        "--data",
        "prompts.jsonl",
        "--steps",
        "30",
        "--dry-run",
    )
    assert code == 0, err
    for method in ("infoppo", "dapo"):
        assert f"--method {method} --data prompts.jsonl --output-dir" in out
    assert out.count("--steps 30") == 2  # the same RL steps for every method of the comparison


def test_a_dry_run_shows_what_the_arms_plans_warn_about(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "sweep", "gamma", "--dry-run", "--data", "prompts.jsonl", "--steps", "5")
    assert code == 0
    warned = "warning: the 10-step warm-up covers the whole 5-step run: the actor never trains at its full"
    assert out.count(warned) == 1  # as `train --dry-run --steps 5` says it, once for all arms


def test_every_benchmark_option_takes_the_same_forms(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from infoppo_cli.eval.registry import parse_selection
    from infoppo_cli.eval.settings import parse_benches
    from infoppo_cli.sweep.grid import parse_eval_benches
    from infoppo_cli.train.eval_set import eval_plan

    (workspace / "b.jsonl").write_text('{"problem": "1+1?", "answer": "2"}\n')
    local = f"l={workspace / 'b.jsonl'}"
    code, out, err = run(capsys, "sweep", "gamma", "--final-eval-bench", local, "--dry-run")
    assert code == 0, err  # refused as "unknown benchmark" before: only names were taken here
    assert out.count(f"--bench {local} ") == 8  # every run's final eval reads the file
    code, out, err = run(capsys, "sweep", "gamma", "--final-eval-bench", "none", "--dry-run")
    assert code == 0 and "infoppo eval" not in out, err
    for text in (local, f"aime24,{local}", "none", "all"):  # train, sweep and eval read each alike
        chosen = parse_selection(text)
        assert eval_plan(text, None, None).benches == chosen
        assert parse_eval_benches(text) == tuple(f"{n}={f}" if f else n for n, f in chosen.items())
        if chosen:
            assert parse_benches(text) == (tuple(chosen), {n: f for n, f in chosen.items() if f})


def test_the_final_eval_reads_the_sweep_s_benches_file(workspace: Path) -> None:
    from infoppo_cli.sweep.grid import build_plan

    options = {"benches_file": "mine.toml"}  # the runs' --benches-file: where a benchmark's own name lives
    plan = build_plan(
        "gamma", preset="qwen3-4b", out_dir=workspace / "s", eval_benches=("x",), train_options=options
    )
    argv = plan.eval_command(plan.points[0])
    assert argv[argv.index("--benches-file") + 1] == "mine.toml"
