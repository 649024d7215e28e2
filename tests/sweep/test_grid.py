"""Sweep grids: expansion and naming per kind, each point's train request and its command line, the eval
command line, option checks, dry-run."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_infoppo
from hypothesis import given
from hypothesis import strategies as st
from sweep_stand_in import write_prompts
from train_command_line import parsed_by_train

from infoppo_cli.errors import UsageError
from infoppo_cli.sweep.grid import (
    GridPoint,
    build_plan,
    expand_grid,
    parse_eval_benches,
    parse_time_arms,
    parse_values,
)
from infoppo_cli.train.methods import method
from infoppo_cli.train.presets import preset
from infoppo_cli.train.request import TrainRequest, train_argv


def plan_for(kind: str, tmp_path: Path, **options):
    return build_plan(kind, preset="qwen3-4b", out_dir=tmp_path / "sweep", **options)


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


# --------------------------------------------------------------------------- expansion and naming


def test_the_arms_differ_in_their_clock_alone() -> None:
    from infoppo_cli.sweepdir.kinds import KINDS

    info, token = (method(KINDS["gamma"].arm_methods[arm]) for arm in ("info", "token"))
    assert (info.advantage, token.advantage) == ("info_time_gae", "gae")
    assert (info.clip, info.token_mask, info.reward, info.optimizer) == (
        token.clip,
        token.token_mask,
        token.reward,
        token.optimizer,
    )
    assert info.all_openrlhf() == token.all_openrlhf()


@pytest.mark.parametrize(
    ("kind", "values", "held"),
    [
        ("gamma", [1.0, 0.999, 0.99, 0.98], ("--lambda", "1.0")),
        ("lambda", [1.0, 0.99, 0.95], ("--gamma", "1.0")),
    ],
)
def test_the_long_task_preset_has_the_paper_s_grids_and_runs_the_coinciding_point_once(
    tmp_path: Path, kind: str, values: list[float], held: tuple[str, str]
) -> None:
    plan = build_plan(kind, preset="tiny-cpu-long", out_dir=tmp_path / "sweep", seeds=3)
    assert list(plan.values) == values
    points = plan.points
    assert len(points) == (2 * len(values) - 1) * 3
    at_one = [p for p in points if p.value == 1.0]
    assert {p.time for p in at_one} == {"info"} and len(at_one) == 3  # γ = λ = 1: the clocks coincide
    for point in points:
        argv = plan.train_command(point)
        assert option(argv, held[0]) == held[1]
        assert point.parameters()[{"--lambda": "lambd", "--gamma": "gamma"}[held[0]]] == 1.0


def test_a_held_value_passed_through_decides_whether_the_clocks_coincide(tmp_path: Path) -> None:
    plan = build_plan(
        "gamma",
        preset="tiny-cpu-long",
        out_dir=tmp_path / "sweep",
        train_options={"lambd": 0.95},
    )
    assert {p.time for p in plan.points if p.value == 1.0} == {"info", "token"}


def test_gamma_default_grid_runs_both_arms_with_the_same_discounting(tmp_path: Path) -> None:
    plan = plan_for("gamma", tmp_path)
    assert [point.name for point in plan.points] == [
        "gamma-1.0-info-seed1",
        "gamma-1.0-token-seed1",
        "gamma-0.9999-info-seed1",
        "gamma-0.9999-token-seed1",
        "gamma-0.999-info-seed1",
        "gamma-0.999-token-seed1",
        "gamma-0.99-info-seed1",
        "gamma-0.99-token-seed1",
    ]
    for point in plan.points:
        argv = plan.train_command(point)
        assert argv[:2] == ["infoppo", "train"]
        assert option(argv, "--method") == {"info": "infoppo", "token": "info-clip"}[point.time]
        assert float(option(argv, "--gamma")) == point.value
        assert option(argv, "--lambda") == "0.99"  # held for both arms
        assert option(argv, "--seed") == "1"
        assert option(argv, "--output-dir") == str(tmp_path / "sweep" / point.name)
        assert option(argv, "--preset") == "qwen3-4b"


def test_lambda_default_grid_holds_gamma_at_the_paper_value(tmp_path: Path) -> None:
    plan = plan_for("lambda", tmp_path)
    assert [p.name for p in plan.points if p.time == "info"] == [
        "lambda-1.0-info-seed1",
        "lambda-0.99-info-seed1",
        "lambda-0.95-info-seed1",
    ]
    assert len(plan.points) == 6
    for point in plan.points:
        argv = plan.train_command(point)
        assert option(argv, "--gamma") == "0.999"
        assert float(option(argv, "--lambda")) == point.value


def test_clip_grid_sets_both_epsilons_on_the_info_arm_only(tmp_path: Path) -> None:
    plan = plan_for("clip", tmp_path)
    assert [p.name for p in plan.points] == [
        "clip-5-10-info-seed1",
        "clip-10-20-info-seed1",
        "clip-20-40-info-seed1",
        "clip-10-10-info-seed1",
    ]
    argv = plan.train_command(plan.points[0])
    assert (option(argv, "--eps-low-info"), option(argv, "--eps-high-info")) == ("5.0", "10.0")
    assert option(argv, "--method") == "infoppo"
    assert "--gamma" not in argv and "--lambda" not in argv


def test_norm_grid(tmp_path: Path) -> None:
    plan = plan_for("norm", tmp_path)
    assert [p.name for p in plan.points] == [
        "norm-global-info-seed1",
        "norm-batch-info-seed1",
        "norm-sentence-info-seed1",
    ]
    assert [option(plan.train_command(p), "--norm") for p in plan.points] == ["global", "batch", "sentence"]


def test_values_time_and_seeds_override_the_defaults(tmp_path: Path) -> None:
    plan = plan_for("gamma", tmp_path, values=["0.97,0.999", "0.97"], time="token", seeds=2)
    assert [p.name for p in plan.points] == [
        "gamma-0.97-token-seed1",
        "gamma-0.97-token-seed2",
        "gamma-0.999-token-seed1",
        "gamma-0.999-token-seed2",
    ]
    later = plan_for("gamma", tmp_path, values=["0.97"], time="info,token", seeds=2, first_seed=4)
    assert [p.name for p in later.points] == [  # seed-major: stopped early, whole seeds are done
        "gamma-0.97-info-seed4",
        "gamma-0.97-token-seed4",
        "gamma-0.97-info-seed5",
        "gamma-0.97-token-seed5",
    ]
    assert option(later.train_command(later.points[2]), "--seed") == "5"
    clip = plan_for("clip", tmp_path, values=["2.5:7"])
    assert clip.points[0].name == "clip-2.5-7-info-seed1"
    assert option(plan.train_command(plan.points[1]), "--seed") == "2"


def test_eval_phase_runs_on_the_final_model_with_the_presets_length(tmp_path: Path) -> None:
    plan = plan_for("norm", tmp_path, eval_benches=parse_eval_benches("aime24,aime25"))
    point = plan.points[0]
    phases = plan.phases(point)
    assert [name for name, _ in phases] == ["train", "eval"]
    argv = phases[1][1]
    run_dir = tmp_path / "sweep" / point.name
    assert argv[:2] == ["infoppo", "eval"]
    assert option(argv, "--model") == str(run_dir / "final")
    assert option(argv, "--bench") == "aime24,aime25"
    assert option(argv, "--out") == str(run_dir / "eval")
    assert option(argv, "--max-tokens") == str(preset("qwen3-4b").max_response_tokens)
    assert [name for name, _ in plan_for("norm", tmp_path).phases(point)] == ["train"]


def test_the_eval_phase_s_command_reads_back_through_eval_s_own_parser(tmp_path: Path) -> None:
    import typer

    from infoppo_cli.cli.entry import app

    plan = plan_for("norm", tmp_path, eval_benches=parse_eval_benches("aime24,aime25"))
    argv = plan.eval_command(plan.points[0])
    params = typer.main.get_command(app).commands["eval"].make_context("eval", argv[2:]).params
    run_dir = tmp_path / "sweep" / plan.points[0].name
    assert (params["model"], params["benches"]) == (str(run_dir / "final"), "aime24,aime25")
    assert (
        params["out"] == run_dir / "eval" and params["max_tokens"] == preset("qwen3-4b").max_response_tokens
    )


def test_the_sweep_s_train_options_reach_every_run_and_replace_held_values(tmp_path: Path) -> None:
    plan = plan_for("gamma", tmp_path, train_options={"lambd": 0.95, "overrides": ["rollout.n=8"]})
    for point in plan.points:
        argv = plan.train_command(point)
        assert argv.count("--lambda") == 1 and option(argv, "--lambda") == "0.95"
        assert option(argv, "--set") == "rollout.n=8"


@pytest.mark.parametrize(
    ("kind", "given", "message"),
    [
        ("gamma", {"seed": 3}, "--seeds N"),
        ("gamma", {"gamma": 0.9}, "--gamma is set by the gamma sweep"),
        ("clip", {"eps_low_info": 3.0}, "--eps-low-info is set"),
        ("norm", {"output_dir": "x"}, "--output-dir is set"),
        ("lambda", {"method": "dapo"}, "--time"),
        ("gamma", {"run_name": "x"}, "--run-name is set by the gamma sweep .* --run-name-prefix"),
        ("gamma", {"address": "h:1"}, "--address is set by the gamma sweep .* --ray-dashboard"),
    ],
)
def test_train_options_the_sweep_sets_itself_are_refused(tmp_path, kind, given, message) -> None:
    with pytest.raises(UsageError, match=message):
        plan_for(kind, tmp_path, train_options=given)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kind", "values", "message"),
    [
        ("gamma", ["1.5"], r"gamma must be in \(0.0, 1.0\]"),
        ("gamma", ["0"], "gamma must be"),
        ("gamma", ["abc"], "takes discount factors"),
        ("gamma", ["nan"], "takes discount factors"),
        ("lambda", ["-0.1"], "lambd must be"),
        ("clip", ["5-10"], "EPS_LOW:EPS_HIGH"),
        ("clip", ["5:10:20"], "EPS_LOW:EPS_HIGH"),
        ("clip", ["-1:10"], "--eps-low-info must be a finite number >= 0, got -1.0"),
        ("norm", ["token"], "global, batch, sentence"),
    ],
)
def test_bad_values_are_usage_errors(kind, values, message) -> None:
    with pytest.raises(UsageError, match=message):
        parse_values(kind, values)


def test_unknown_kind_lists_the_kinds(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match="unknown sweep kind 'entropy'; choose one of gamma, lambda, clip, norm"
    ):
        plan_for("entropy", tmp_path)


def test_time_arms_are_checked() -> None:
    assert parse_time_arms("gamma", None) == ("info", "token")
    assert parse_time_arms("clip", None) == ("info",)
    assert parse_time_arms("lambda", "token,info,token") == ("token", "info")
    with pytest.raises(UsageError, match="unknown --time wall"):
        parse_time_arms("gamma", "info,wall")
    with pytest.raises(UsageError, match="only information-time PPO has"):
        parse_time_arms("clip", "token")


def test_unknown_preset_seeds_and_bench_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown preset 'qwen9'"):
        build_plan("gamma", preset="qwen9", out_dir=tmp_path)
    with pytest.raises(UsageError, match="--seeds must be >= 1"):
        plan_for("gamma", tmp_path, seeds=0)
    with pytest.raises(UsageError, match="--first-seed must be >= 1, got 0"):
        plan_for("gamma", tmp_path, first_seed=0)
    with pytest.raises(UsageError, match="--first-seed 4294967295 with --seeds 2 goes past the largest seed"):
        plan_for("gamma", tmp_path, first_seed=2**32 - 1, seeds=2)
    with pytest.raises(UsageError, match="unknown benchmark 'aime99'"):
        parse_eval_benches("aime24,aime99")


# --------------------------------------------------------------------------- properties


@given(st.lists(st.floats(min_value=1e-6, max_value=1.0), min_size=1, max_size=6))
def test_gamma_values_round_trip_through_names_and_commands(values: list[float]) -> None:
    points = expand_grid("gamma", parse_values("gamma", [",".join(repr(v) for v in values)]), ("info",), 1)
    distinct = list(dict.fromkeys(values))
    assert [point.value for point in points] == distinct
    assert len({point.name for point in points}) == len(distinct)
    for point in points:
        argv = train_argv(TrainRequest("qwen3-4b", **point.swept_fields()))
        assert float(option(argv, "--gamma")) == point.value
        assert "/" not in point.name and " " not in point.name


@given(st.integers(min_value=1, max_value=5), st.sampled_from(["gamma", "lambda", "clip", "norm"]))
def test_grid_size_is_values_times_arms_times_seeds(seeds: int, kind: str) -> None:
    values = parse_values(kind, None)
    arms = parse_time_arms(kind, None)
    points = expand_grid(kind, values, arms, seeds)
    assert len(points) == len(values) * len(arms) * seeds
    assert len({point.name for point in points}) == len(points)
    assert {point.seed for point in points} == set(range(1, seeds + 1))
    assert all(isinstance(point, GridPoint) for point in points)


# --------------------------------------------------------------------------- the command line


@pytest.mark.slow
def test_dry_run_prints_the_grid_and_every_command_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "lam"
    write_prompts(tmp_path / "train.jsonl")
    result = run_infoppo(
        "sweep", "lambda", "--values", "0.9,0.95", "--final-eval-bench", "aime25", "--out", str(out),
        "--dry-run", "--data", "train.jsonl", "--eval-bench", "none", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = build_plan(
        "lambda", preset="qwen3-4b", out_dir=out, values=["0.9,0.95"], eval_benches=("aime25",),
        train_options={"data": "train.jsonl", "eval_bench": "none"},
    )  # fmt: skip
    for point in plan.points:
        row = next(line for line in result.stdout.splitlines() if f" {point.name} " in line)
        assert point.method in row and "0.999" in row and "new" in row
        for _, command in plan.phases(point):
            assert " ".join(command) in result.stdout
    assert result.stdout.count("infoppo train ") == 4 and result.stdout.count("infoppo eval ") == 4
    assert not out.exists()


@pytest.mark.slow
def test_dry_run_for_ray_shows_that_train_joins_the_jobs_cluster(tmp_path: Path) -> None:
    result = run_infoppo(
        "sweep", "norm", "--values", "batch", "--ray-dashboard", "http://head:8265", "--max-parallel", "3",
        "--out", str(tmp_path / "n"), "--dry-run", "--data", str(write_prompts(tmp_path / "p.jsonl")),
        "--eval-bench", "none", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "as Ray jobs on http://head:8265, at most 3 at once" in result.stdout
    assert "--norm batch --seed 1 --address auto" in result.stdout
    assert "p.jsonl --output-dir" in result.stdout and "--eval-bench none" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["sweep", "entropy", "--dry-run"],
            "error: unknown sweep kind 'entropy'; choose one of gamma, lambda",
        ),
        (["sweep", "gamma", "--values", "2", "--dry-run"], "error: --values for the gamma sweep takes"),
        (["sweep", "clip", "--values", "5,10", "--dry-run"], "EPS_LOW:EPS_HIGH pairs"),
        (
            ["sweep", "gamma", "--max-parallel", "2", "--dry-run"],
            "error: --max-parallel needs --ray-dashboard or --launcher slurm",
        ),
        (["sweep", "gamma", "--seed", "2", "--dry-run"], "error: --seed is set by the gamma sweep"),
        (
            ["sweep", "components", "--values", "0.9", "--dry-run"],
            "error: the components sweep takes no values",
        ),
        (
            ["sweep", "components", "--time", "info", "--dry-run"],
            "error: unknown --time info; choose from ppo",
        ),
        # caught by planning every arm as `infoppo train` would, before anything runs
        (["sweep", "gamma", "--dry-run", "--set", "actor.lrr=1", "--data", "P"], "has no flag --actor.lrr"),
        (["sweep", "gamma"], "data file data/dapo-math-17k.jsonl not found"),  # a real sweep, no data
        (
            ["sweep", "norm", "--dry-run", "--bogus", "--data", "P"],
            "error: No such option: --bogus",
        ),
        (["sweep", "gamma", "--launcher", "ray", "--dry-run"], "error: --launcher ray needs --ray-dashboard"),
        (
            ["sweep", "gamma", "--launcher", "slurm", "--ray-dashboard", "h:1", "--dry-run"],
            "--ray-dashboard is for --launcher ray",
        ),
        (["sweep", "gamma", "--address", "h:1", "--dry-run"], "--address is set by the gamma sweep"),
        (
            ["sweep", "gamma", "--launcher", "slurm", "--slurm-time", "2 days", "--dry-run"],
            "--slurm-time takes",
        ),
    ],
)
@pytest.mark.slow
def test_bad_sweep_options_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    prompts = str(write_prompts(tmp_path / "prompts.jsonl"))
    result = run_infoppo(*(prompts if arg == "P" else arg for arg in args), cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------- the train request of a point


@pytest.mark.parametrize("kind", ["gamma", "lambda", "clip", "norm", "components", "methods"])
def test_each_point_is_a_request_whose_command_train_reads_back_into_it(tmp_path: Path, kind: str) -> None:
    """A point's command is its request's (``train_argv``), the sweep's train options included; `infoppo
    train` parses it into the very request the sweep planned and checked."""
    given = {"steps": 3, "data": "p.jsonl", "overrides": ["rollout.batch_size=8"], "eval_before": False}
    plan = plan_for(kind, tmp_path, train_options=given)
    for point in plan.points:
        request = plan.train_request(point)
        assert plan.train_command(point) == train_argv(request)
        assert parsed_by_train(plan.train_command(point)) == request
        assert (request.steps, request.data, request.eval_before) == (3, "p.jsonl", False)


def test_held_values_are_the_info_method_s_and_a_passed_spelling_replaces_them(tmp_path: Path) -> None:
    info = method("infoppo").openrlhf
    plan = plan_for("gamma", tmp_path)
    assert plan.held() == {"--lambd": info["algo.advantage.lambd"]}
    assert plan.train_request(plan.points[0]).lambd == info["algo.advantage.lambd"]
    assert plan_for("lambda", tmp_path).held() == {"--gamma": info["algo.advantage.gamma"]}
    passed = plan_for("gamma", tmp_path, train_options={"lambd": 0.9})
    assert passed.held() == {} and passed.train_command(passed.points[0]).count("--lambda") == 1
    assert passed.train_request(passed.points[0]).lambd == 0.9
    with pytest.raises(UsageError, match="--lambda is set by the lambda sweep"):
        plan_for("lambda", tmp_path, train_options={"lambd": 0.9})
