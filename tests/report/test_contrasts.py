"""Pre-registered paired contrasts: the TOML format, pairing by seed, the three metrics, the per-seed
differences with their 95% t interval, and the arms' summaries, all against values worked out by hand."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import pytest
from contrast_runs import CONTRASTS_TOML, contrast_runs, curve_a, curve_b, write_contrast_run

from infoppo_cli.errors import UsageError
from infoppo_cli.report.contrast_report import contrasts_markdown
from infoppo_cli.report.contrasts import (
    Arm,
    Contrast,
    budget_metrics,
    contrast_results,
    curve_metrics,
    parse_contrasts,
    read_contrasts,
)
from infoppo_cli.report.runs import read_inputs

T_975_DF2 = 4.303
"""Student's t, 0.975 quantile, 2 degrees of freedom (any statistics table)."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    return read_inputs([contrast_runs(tmp_path_factory.mktemp("contrasts"))]).runs


@pytest.fixture(scope="module")
def contrasts(tmp_path_factory: pytest.TempPathFactory) -> list[Contrast]:
    path = tmp_path_factory.mktemp("toml") / "design.toml"
    path.write_text(CONTRASTS_TOML)
    return read_contrasts(path)


def test_the_file_gives_each_contrast_its_arms_and_ignores_other_tables(contrasts: list[Contrast]) -> None:
    assert contrasts == [
        Contrast("clock", Arm("infoppo", 0.99, 1.0), Arm("ppo", 0.99, 1.0)),
        Contrast("discount", Arm("infoppo", 0.99), Arm("infoppo", 1.0), bench="aime24"),
    ]


def test_curve_metrics_are_the_last_eval_the_last_three_and_the_area_over_the_span() -> None:
    series = [(0.0, 50.0), (10.0, 61.0), (20.0, 71.0), (30.0, 82.0)]
    metrics = curve_metrics(series)
    assert metrics["last"] == 82.0
    assert metrics["last3"] == pytest.approx((61 + 71 + 82) / 3)
    assert metrics["auc"] == pytest.approx((5 * (50 + 61) + 5 * (61 + 71) + 5 * (71 + 82)) / 30)
    uneven = curve_metrics([(0.0, 0.0), (10.0, 100.0), (40.0, 100.0)])
    assert uneven["auc"] == pytest.approx((10 * 50 + 30 * 100) / 40)  # trapezoids weigh each gap
    short = curve_metrics([(5.0, 40.0), (10.0, 60.0)])
    assert short == {"last": 60.0, "last3": None, "auc": 50.0}
    assert curve_metrics([(5.0, 40.0)])["auc"] is None


def test_differences_are_paired_by_seed_with_their_t_interval(runs: list, contrasts: list[Contrast]) -> None:
    clock, discount = contrast_results(runs, contrasts)
    assert clock.bench == "aime24"  # the runs' one in-training benchmark
    expected = {
        "last": [10.0 + 2 * s for s in (1, 2, 3)],
        "last3": [(25.0 + 3 * s) / 3 for s in (1, 2, 3)],
        "auc": [20 / 3 + 2 * s / 3 for s in (1, 2, 3)],
    }
    for difference in clock.differences:
        wanted = expected[difference.metric]
        assert difference.seeds == [1, 2, 3]
        assert difference.differences == pytest.approx(wanted)
        assert difference.mean == pytest.approx(statistics.fmean(wanted))
        half = T_975_DF2 * statistics.stdev(wanted) / math.sqrt(3)
        low, high = difference.interval
        assert (low, high) == pytest.approx(
            (statistics.fmean(wanted) - half, statistics.fmean(wanted) + half)
        )
    assert clock.differences[0].interval == pytest.approx(
        (14 - 4.303 * 2 / math.sqrt(3), 14 + 4.303 * 2 / math.sqrt(3))
    )
    assert [d.differences for d in discount.differences] == [d.differences for d in clock.differences]
    assert discount.notes == ["discount: seed(s) 4 of arm a have no run in the other arm and are left out"]
    assert clock.notes == ["clock: seed(s) 4 of arm a have no run in the other arm and are left out"]


def test_each_arm_gets_mean_and_standard_error_and_its_last_step_length_and_discounts(
    runs: list, contrasts: list[Contrast]
) -> None:
    clock = contrast_results(runs, contrasts)[0]
    a_last = [curve_a(s)[-1] for s in (1, 2, 3)]
    assert clock.a.metrics["last"] == pytest.approx((84.0, statistics.stdev(a_last) / math.sqrt(3)))
    assert clock.b.metrics["last"] == (70.0, 0.0)  # every b seed ends at 70
    assert clock.b.metrics["last3"][0] == pytest.approx(
        statistics.fmean(sum(curve_b(s)[1:]) / 3 for s in (1, 2, 3))
    )
    assert clock.a.extras == pytest.approx({"length": 102.0, "Gamma_info": 0.5, "gamma^T": 0.3})
    assert clock.b.extras["Gamma_info"] is None  # token time logs no Γ_info
    assert (clock.b.extras["length"], clock.b.extras["gamma^T"]) == pytest.approx((102.0, 0.4))
    assert clock.a.runs == ["infoppo-g0.99-s1", "infoppo-g0.99-s2", "infoppo-g0.99-s3"]


def test_one_seed_gives_a_difference_without_an_interval(tmp_path: Path) -> None:
    write_contrast_run(tmp_path / "runs" / "a", "infoppo", 0.99, 1.0, 1, curve_a(1), True)
    write_contrast_run(tmp_path / "runs" / "b", "ppo", 0.99, 1.0, 1, curve_b(1), False)
    [result] = contrast_results(
        read_inputs([tmp_path / "runs"]).runs, [Contrast("one", Arm("infoppo"), Arm("ppo"))]
    )
    last = result.differences[0]
    assert (last.n, last.mean, last.interval) == (1, 12.0, None)
    assert result.a.metrics["last"] == (82.0, None)


def test_gamma_is_matched_within_a_tolerance_of_the_trained_value(runs: list) -> None:
    near = Contrast("near", Arm("infoppo", 0.99 + 1e-12, 1.0), Arm("ppo", 0.99, 1.0))
    off = Contrast("off", Arm("infoppo", 0.99 + 1e-6, 1.0), Arm("ppo", 0.99, 1.0))
    assert contrast_results(runs, [near])[0].differences[0].n == 3
    result = contrast_results(runs, [off])[0]
    assert result.differences[0].n == 0 and "off: no seed has a run in both arms" in result.notes


def test_a_seed_matched_by_two_runs_of_one_arm_is_refused_naming_them(runs: list) -> None:
    loose = Contrast("loose", Arm("infoppo"), Arm("ppo"))  # γ = 0.99 and γ = 1 both match
    with pytest.raises(
        UsageError,
        match=r"contrast 'loose': seed 1 of arm a \(infoppo\) is matched by two runs, "
        r"infoppo-g0.99-s1 and infoppo-g1-s1",
    ):
        contrast_results(runs, [loose])


def test_no_bench_with_two_in_training_benchmarks_is_refused(tmp_path: Path) -> None:
    run = write_contrast_run(tmp_path / "runs" / "a", "infoppo", 0.99, 1.0, 1, curve_a(1), True)
    with (run / "metrics.jsonl").open("a") as handle:
        handle.write('{"step": 40, "eval_aime25": 30.0}\n')
    runs = read_inputs([tmp_path / "runs"]).runs
    with pytest.raises(
        UsageError, match=r"names no bench and the runs' in-training benchmarks are 2 \(aime24, aime25\)"
    ):
        contrast_results(runs, [Contrast("c", Arm("infoppo"), Arm("ppo"))])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[contrasts]]\nname = "x"\na = { method = "ppo" }\nb = { method = "ppo" }\nmetric = "auc"\n',
            "contrast 'x': unknown key(s) 'metric'; allowed: name, a, b, bench",
        ),
        (
            '[[contrasts]]\nname = "x"\na = { method = "ppo", clip = 0.2 }\nb = { method = "ppo" }\n',
            "contrast 'x', arm a: unknown key(s) 'clip'; allowed: method, gamma, lambd",
        ),
        (
            '[[contrasts]]\nname = "x"\na = { method = "ppo" }\n',
            "contrast 'x', arm b is missing or not a table",
        ),
        (
            '[[contrasts]]\nname = "x"\na = { method = "ppo", gamma = "high" }\nb = { method = "ppo" }\n',
            "arm a: gamma must be a number",
        ),
        ('[[contrasts]]\na = { method = "ppo" }\nb = { method = "ppo" }\n', "contrast 1 needs a name"),
        ('[stages]\nname = "x"\n', "design.toml has no [[contrasts]] tables"),
        (
            '[[contrasts]]\nname = "x"\nx = "tokens"\na = { method = "ppo" }\nb = { method = "ppo" }\n',
            "contrast 'x': x must be one of 'steps', 'responses', got 'tokens'",
        ),
    ],
    ids=["contrast-key", "arm-key", "missing-arm", "gamma-type", "no-name", "no-contrasts", "axis"],
)
def test_a_malformed_contrast_is_refused_with_one_line(text: str, message: str) -> None:
    import tomllib

    with pytest.raises(UsageError, match=re.escape(message)):
        parse_contrasts(tomllib.loads(text), "design.toml")


def test_a_file_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("[[contrasts]\n")
    with pytest.raises(UsageError, match="bad.toml is not valid TOML"):
        read_contrasts(tmp_path / "bad.toml")
    with pytest.raises(UsageError, match="missing.toml: cannot read it"):
        read_contrasts(tmp_path / "missing.toml")


def test_a_contrast_may_compare_another_per_step_record_than_accuracy(runs: list) -> None:
    """``curve = "response_length_mean"``: the metrics of each run's length record (100 + seed + step at
    steps 10 and 20, 100 + seed at step 30, in both arms), so every difference is 0 and arm a's last is
    the mean of 100 + seed over seeds 1-3."""
    lengths = Contrast(
        "length", Arm("infoppo", 0.99, 1.0), Arm("ppo", 0.99, 1.0), curve="response_length_mean"
    )
    (result,) = contrast_results(runs, [lengths])
    assert all(difference.differences == [0.0, 0.0, 0.0] for difference in result.differences)
    assert result.a.metrics["last"][0] == pytest.approx(102.0)
    assert result.a.metrics["last3"][0] == pytest.approx(statistics.fmean([112, 122, 102]))
    document = {"contrasts": [{"name": "x", "a": {"method": "p"}, "b": {"method": "q"}, "curve": 3}]}
    with pytest.raises(UsageError, match="curve must be a non-empty string"):
        parse_contrasts(document, "design.toml")


def test_budget_metrics_read_a_curve_at_fractions_of_a_common_response_budget() -> None:
    """Evals at 0, 2000, 4000 and 6000 responses read up to a budget of 3000: the accuracy there lies
    halfway between the evals at 2000 and 4000, and the area stops at it."""
    curve = [(0.0, 50.0), (2000.0, 60.0), (4000.0, 90.0), (6000.0, 90.0)]
    metrics = budget_metrics(curve, 3000.0)
    assert metrics["last"] == pytest.approx(75.0)
    assert metrics["last3"] == pytest.approx((60.0 + 67.5 + 75.0) / 3)  # at 2000, 2500 and 3000
    assert metrics["auc"] == pytest.approx((2000 * 55.0 + 1000 * (60.0 + 75.0) / 2) / 3000)
    assert budget_metrics(curve, 6000.0) == budget_metrics(curve, 9000.0)  # never past the curve's end
    assert budget_metrics(curve, 6000.0)["last3"] == pytest.approx((90.0 + 90.0 + 90.0) / 3)
    assert budget_metrics([(0.0, 50.0)], 100.0) == {"last": None, "last3": None, "auc": None}


def _run_on_responses(run_dir: Path, method: str, per_step: float, accuracies: list[float]) -> None:
    """A 30-step run generating ``per_step`` responses every step, evaluated at steps 0, 10, 20, 30."""
    run_dir.mkdir(parents=True)
    manifest = {"config": {"method": method, "openrlhf_flags": {}}, "seed": 1, "status": "finished"}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    evals = dict(zip((0, 10, 20, 30), accuracies, strict=True))
    rows = [{"step": 0, "eval_chain": evals[0]}]
    rows += [
        {"step": step, "responses_generated": per_step}
        | ({"eval_chain": evals[step]} if step in evals else {})
        for step in range(1, 31)
    ]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_contrast_per_response_generated_compares_the_arms_at_their_common_budget(tmp_path: Path) -> None:
    """InfoPPO generates 100 responses a step (3000 in all), DAPO 200 (6000): per response, DAPO's step-20
    eval (60) sits at 4000 responses, and both are read up to 3000. On steps DAPO's curve is higher;
    per response it is lower."""
    _run_on_responses(tmp_path / "runs" / "infoppo", "infoppo", 100.0, [50.0, 60.0, 70.0, 80.0])
    _run_on_responses(tmp_path / "runs" / "dapo", "dapo", 200.0, [50.0, 60.0, 90.0, 90.0])
    runs = read_inputs([tmp_path / "runs"]).runs
    on_steps, on_responses = contrast_results(
        runs,
        [
            Contrast("steps", Arm("infoppo"), Arm("dapo")),
            Contrast("responses", Arm("infoppo"), Arm("dapo"), x="responses"),
        ],
    )
    assert {d.metric: d.differences for d in on_steps.differences}["last"] == [-10.0]
    per_response = {d.metric: d.differences[0] for d in on_responses.differences}
    assert per_response["last"] == pytest.approx(80.0 - 75.0)
    assert per_response["last3"] == pytest.approx(75.0 - (60.0 + 67.5 + 75.0) / 3)
    assert per_response["auc"] == pytest.approx(65.0 - (2000 * 55.0 + 1000 * 67.5) / 3000)
    markdown = "\n".join(contrasts_markdown([on_responses]))
    assert "common budget B (the smaller of the two runs' totals)" in markdown
    assert "common budget" not in "\n".join(contrasts_markdown([on_steps]))
