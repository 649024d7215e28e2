"""metrics.jsonl: its encoding of a diverged step, its one writer and its one reader."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from infoppo_cli.rundir import MetricsWriter, metric_number, metrics_line, read_metrics, read_metrics_log
from infoppo_cli.rundir.metrics import RESUMED_AT


def test_metrics_reader_merges_repeated_steps_and_says_what_it_skipped(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(
        '{"step": 2, "reward_mean": 0.2}\n'
        '{"reward_mean": 0.9}\n'  # no step: its line number (2) stands in
        '{"step": 2, "rho_mean": 0.5}\n'
        "[1, 2]\n"
        '{"step": 1, "reward_mean": 0.1}\n'
        '{"step": 3, "rew'
    )
    log = read_metrics_log(path)
    assert log.records == [
        {"step": 1, "reward_mean": 0.1},
        {"step": 2, "reward_mean": 0.9, "rho_mean": 0.5},
    ]
    assert (log.malformed_lines, log.stepless_lines) == ([4, 6], [2])


@given(st.lists(st.tuples(st.integers(1, 5), st.floats(-1, 1)), max_size=20))
def test_later_lines_win_for_any_order_of_steps(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("m") / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s, "x": x}) + "\n" for s, x in lines))
    expected = {}
    for step, x in lines:
        expected[step] = x
    assert read_metrics_log(path).records == [{"step": s, "x": expected[s]} for s in sorted(expected)]


def test_a_resume_drops_the_earlier_lines_of_the_steps_it_trains_again(tmp_path):
    """An attempt trained to step 5 (eval at 5) but its last checkpoint is step 3: the resumed run's
    steps 4.. are of other weights, and nothing of the first attempt's 4 and 5 may stay, not even a
    field the second attempt's lines lack."""
    path = tmp_path / "metrics.jsonl"
    writer = MetricsWriter(path)
    for step in range(6):
        writer.append({"step": step, "x": float(step)} | ({"eval_chain": 50.0} if step in (0, 5) else {}))
    writer.mark_resumed(3)
    writer.append({"step": 4, "x": 40.0})
    records = read_metrics_log(path).records
    assert records == [
        {"step": 0, "x": 0.0, "eval_chain": 50.0},
        {"step": 1, "x": 1.0},
        {"step": 2, "x": 2.0},
        {"step": 3, "x": 3.0},
        {"step": 4, "x": 40.0},
    ]
    writer.mark_resumed(0)  # no checkpoint: started again from the base model
    assert read_metrics_log(path).records == [{"step": 0, "x": 0.0, "eval_chain": 50.0}]


def test_a_resume_marker_that_names_no_step_is_skipped_and_said_why(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(
        '{"step": 1, "x": 1.0}\n{"step": 2, "x": 2.0}\n'
        '{"step": 1, "resumed_at_step": "NaN"}\n{"step": 1, "resumed_at_step": 1.5}\n'
    )
    log = read_metrics_log(path)
    assert [r["step"] for r in log.records] == [1, 2]
    assert log.invalid_lines == [
        (3, 'resumed_at_step "NaN" is not a step'),
        (4, "resumed_at_step 1.5 is not a step"),
    ]


@given(st.lists(st.integers(0, 6), min_size=1, max_size=8), st.integers(0, 6))
def test_after_a_resume_no_step_past_its_checkpoint_is_read_from_before_it(tmp_path_factory, steps, resume):
    path = tmp_path_factory.mktemp("m") / "metrics.jsonl"  # written at once: the writer fsyncs each line
    lines = [{"step": step, "before": 1.0} for step in steps] + [{"step": resume, RESUMED_AT: resume}]
    path.write_text("".join(metrics_line(line) + "\n" for line in lines))
    assert [r["step"] for r in read_metrics_log(path).records] == sorted({s for s in steps if s <= resume})


def test_metric_numbers_keep_non_finite_values_in_every_encoding(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "a": NaN, "b": "-Infinity", "c": null, "d": "inf", "e": 2}\n')
    [record] = read_metrics_log(path).records
    numbers = {key: metric_number(value) for key, value in record.items()}
    assert math.isnan(numbers["a"]) and math.isnan(numbers["c"])
    assert (numbers["b"], numbers["d"], numbers["e"]) == (-math.inf, math.inf, 2.0)
    assert metric_number(True) is None and metric_number("x") is None  # a flag or text is not a metric
    assert metric_number(10**400) == math.inf and metric_number("NaN") != metric_number("NaN")


def test_a_line_with_a_value_outside_the_schema_is_skipped_and_said_why(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(
        '{"step": 1, "reward_mean": 0.5}\n'
        '{"step": -5, "reward_mean": 0.9}\n'
        '{"step": 2, "reward_mean": "high"}\n'
        '{"step": 3, "flag": true, "reward_mean": 0.7}\n'
        '{"step": 4, "reward_mean": [' + ", ".join(["1"] * 30) + "]}\n"
        '{"step": 0, "eval_x": 50.0}\n'  # the base model's eval: step 0 is a step
    )
    log = read_metrics_log(path)
    assert [record["step"] for record in log.records] == [0, 1]  # never plotted
    assert log.invalid_lines[:3] == [
        (2, "step -5 is negative"),
        (3, 'reward_mean "high" is not a number'),
        (4, "flag true is not a number"),
    ]
    number, why = log.invalid_lines[3]  # a long value is cut short
    assert number == 5 and why.startswith("reward_mean [1, 1,") and why.endswith("... is not a number")
    assert len(why) < 70


def test_a_line_is_standard_json_with_non_finite_values_as_text():
    line = metrics_line({"step": 3, "a": math.nan, "b": math.inf, "c": -math.inf, "d": 0.5})
    assert line == '{"step": 3, "a": "NaN", "b": "Infinity", "c": "-Infinity", "d": 0.5}'


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_every_float_survives_a_write_and_a_read(value):
    [(key, read)] = [(key, metric_number(v)) for key, v in json.loads(metrics_line({"x": value})).items()]
    assert key == "x" and (read == value or (math.isnan(read) and math.isnan(value)))


def test_the_writer_appends_lines_the_reader_reads_after_a_torn_one_is_cut(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "reward_mean": 0.1}\n{"step": 2, "rew')  # a crash mid-line
    writer = MetricsWriter(path)
    writer.append({"step": 2, "reward_mean": math.nan})
    writer.append({"step": 3, "reward_mean": 0.3})
    assert path.read_text().splitlines()[1] == '{"step": 2, "reward_mean": "NaN"}'
    steps = read_metrics(path)
    assert [record["step"] for record in steps] == [1, 2, 3] and steps[2]["reward_mean"] == 0.3
