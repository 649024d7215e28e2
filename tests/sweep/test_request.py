"""The command that resumes a sweep is its typed request's, written by ``schema.command_line`` and read
back by `infoppo sweep`'s own parser into the same request, SLURM settings and train options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from infoppo_cli.cli.entry import app
from infoppo_cli.cli.options import given_fields
from infoppo_cli.sweep.grid import build_plan, parse_eval_benches
from infoppo_cli.sweep.request import SlurmSettings, SweepRequest
from infoppo_cli.train.request import TrainRequest


def parsed_by_sweep(argv: list[str]) -> dict[str, Any]:
    """The options `infoppo sweep` reads from ``argv`` (``infoppo sweep KIND ...``), by parameter name,
    those not given left out (a repeatable option not given reads as ``()``); nothing is planned or run."""
    assert argv[:2] == ["infoppo", "sweep"], argv
    command = typer.main.get_command(app).commands["sweep"]  # type: ignore[attr-defined]
    params = command.make_context("sweep", argv[2:]).params
    return {name: value for name, value in params.items() if value not in (None, ())}


def _plan(tmp_path: Path, **options: Any):
    return build_plan(
        "gamma",
        preset="tiny-cpu",
        out_dir=tmp_path / "g",
        values=["0.99", "0.9"],
        seeds=2,
        eval_benches=parse_eval_benches("aime24", None),
        train_options={"steps": 3, "overrides": ["rollout.batch_size=4"], "norm": "sentence"},
        run_name_prefix="v1",
        **options,
    )


@pytest.mark.parametrize(
    ("request_", "slurm"),
    [
        (SweepRequest(), None),
        (SweepRequest(ray_dashboard="http://head:8265", max_parallel=3), None),
        (SweepRequest(launcher="slurm"), SlurmSettings(partition="gpu", time="2:00:00", nodes=2)),
    ],
    ids=["local", "ray", "slurm"],
)
def test_the_resume_command_reads_back_into_the_same_sweep(tmp_path, request_, slurm):
    plan = _plan(tmp_path, first_seed=4)
    argv = request_.resume_command(plan, parallel=3, slurm=slurm)
    params = parsed_by_sweep(argv)
    again = SweepRequest(**given_fields(params, SweepRequest))
    train_options = given_fields(params, TrainRequest, prefix="train_")
    assert params["kind"] == "gamma"
    assert again.plan("gamma", train_options).settings() == plan.settings()
    assert again.chosen_launcher == request_.chosen_launcher
    assert again.ray_dashboard == request_.ray_dashboard
    assert again.max_parallel == (None if request_.chosen_launcher == "local" else 3)
    assert train_options == {"steps": 3, "overrides": ["rollout.batch_size=4"], "norm": "sentence"}
    if slurm is not None:
        assert SlurmSettings(**given_fields(params, SlurmSettings, prefix="slurm_")) == slurm
    else:
        assert not any(flag.startswith("--slurm") for flag in argv)


def test_one_off_actions_are_not_recorded(tmp_path):
    argv = SweepRequest(retry_failed=True, force_new_grid=True).resume_command(_plan(tmp_path))
    assert "--retry-failed" not in argv and "--force-new-grid" not in argv
    assert argv[argv.index("--values") + 1] == "0.99,0.9" and argv[argv.index("--seeds") + 1] == "2"


def test_a_recorded_command_read_back_is_refused_by_the_rules_of_a_typed_one(tmp_path):
    argv = SweepRequest().resume_command(_plan(tmp_path))
    argv[argv.index("--norm") + 1] = "bogus"
    with pytest.raises(typer.BadParameter, match="bogus"):
        parsed_by_sweep(argv)
