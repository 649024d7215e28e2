"""The components sweep: InfoPPO taken apart into its two halves, at the same gamma, lambda and seeds."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_infoppo
from sweep_stand_in import write_prompts

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.grid import build_plan
from infoppo_cli.sweep.request import SweepRequest
from infoppo_cli.sweepdir.kinds import COMPONENT_METHODS, KINDS, parse_values
from infoppo_cli.train.methods import method


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_components_runs_the_four_arms_at_the_same_gamma_lambda_and_seeds(tmp_path: Path) -> None:
    plan = build_plan("components", preset="qwen3-4b", out_dir=tmp_path / "c", seeds=2)
    assert [(p.method, p.seed) for p in plan.points] == [
        (m, seed) for seed in (1, 2) for m in ("ppo", "info-gae", "info-clip", "infoppo")
    ]
    assert plan.points[0].name == "components-ppo-seed1"
    commands = [plan.train_command(point) for point in plan.points]
    assert {(option(c, "--gamma"), option(c, "--lambda")) for c in commands} == {("0.999", "0.99")}
    assert {option(c, "--method") for c in commands} == set(COMPONENT_METHODS)


def test_the_arms_are_shipped_methods_that_differ_in_one_component_each() -> None:
    parts = {name: (method(name).advantage, method(name).clip) for name in COMPONENT_METHODS}
    assert parts["info-gae"][0] == parts["infoppo"][0] != parts["ppo"][0]
    assert parts["info-clip"][1] == parts["infoppo"][1] != parts["ppo"][1]
    assert parts["info-gae"][1] == parts["ppo"][1] and parts["info-clip"][0] == parts["ppo"][0]


def test_passed_gamma_replaces_the_held_one_and_arms_can_be_chosen(tmp_path: Path) -> None:
    plan = build_plan(
        "components",
        preset="qwen3-4b",
        out_dir=tmp_path,
        time="ppo,infoppo",
        train_options={"gamma": 1.0},
    )
    assert [p.method for p in plan.points] == ["ppo", "infoppo"]
    assert all(option(plan.train_command(p), "--gamma") == "1.0" for p in plan.points)
    assert "--values" not in SweepRequest().resume_command(plan)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_empty_values_option_is_an_error_not_the_default_grid(kind: str) -> None:
    with pytest.raises(UsageError, match="--values is empty"):
        parse_values(kind, [""])
    with pytest.raises(UsageError, match="--values is empty"):
        parse_values(kind, [" , "])
    assert parse_values(kind, None) == KINDS[kind].defaults


@pytest.mark.slow
def test_components_dry_run_lists_the_four_arms(tmp_path: Path) -> None:
    prompts = write_prompts(tmp_path / "p.jsonl")
    result = run_infoppo(
        "sweep", "components", "--dry-run", "--data", str(prompts), "--out", "c",
        "--eval-bench", "none", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for arm in COMPONENT_METHODS:
        assert f"components-{arm}-seed1" in result.stdout
        run_dir = tmp_path / "c" / f"components-{arm}-seed1"
        assert (
            f"--method {arm} --data {prompts} --output-dir {run_dir} --gamma 0.999 --lambda 0.99 --seed 1"
            in (result.stdout)
        )
    assert "components sweep, preset qwen3-4b: 4 runs" in result.stdout
