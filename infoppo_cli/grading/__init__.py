"""The grader shared by the training reward and evaluation: ``grade(response, gold)``."""

from infoppo_cli.grading.core import (
    DEFAULT_TIMEOUT,
    REASONS,
    GradingPool,
    Verdict,
    default_workers,
    extract_answer,
    final_text,
    grade,
    grade_many,
    inner_timeout_seconds,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "REASONS",
    "GradingPool",
    "Verdict",
    "default_workers",
    "extract_answer",
    "final_text",
    "grade",
    "grade_many",
    "inner_timeout_seconds",
]
