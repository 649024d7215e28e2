"""``metrics.json``, the scores of an evaluation: written as standard JSON, read back, and one error for a
file that holds no scores."""

from __future__ import annotations

import math

import pytest

from infoppo_cli.rundir import (
    EVAL_METRICS_FILE,
    UnreadableEvalMetrics,
    eval_metrics_path,
    read_eval_metrics,
    write_eval_metrics,
)

SCORES = {"benches": {"aime24": {"k": 4, "mean@k": 25.0, "mean@k_se": math.nan}}, "average": {"k": 4}}


def test_no_file_is_no_scores(tmp_path):
    assert read_eval_metrics(tmp_path) is None
    assert eval_metrics_path(tmp_path) == tmp_path / EVAL_METRICS_FILE


def test_scores_are_written_as_standard_json_and_read_back(tmp_path):
    path = write_eval_metrics(tmp_path, SCORES)
    assert path == tmp_path / EVAL_METRICS_FILE
    assert "NaN" not in path.read_text(encoding="utf-8")  # a non-finite number is null
    document = read_eval_metrics(tmp_path)
    assert document["benches"]["aime24"] == {"k": 4, "mean@k": 25.0, "mean@k_se": None}
    assert document["average"] == {"k": 4}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "Expecting property name"),
        ("[1, 2]", "no 'benches' object"),
        ('{"benches": [1]}', "no 'benches' object"),
        ('{"average": {}}', "no 'benches' object"),
    ],
)
def test_a_file_without_scores_is_one_error_saying_why(tmp_path, text, reason):
    (tmp_path / EVAL_METRICS_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(UnreadableEvalMetrics, match=reason):
        read_eval_metrics(tmp_path)


def test_a_file_that_cannot_be_read_is_the_same_error(tmp_path):
    (tmp_path / EVAL_METRICS_FILE).mkdir()
    with pytest.raises(UnreadableEvalMetrics):
        read_eval_metrics(tmp_path)
