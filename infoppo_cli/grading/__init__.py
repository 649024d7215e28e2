"""The grader shared by the training reward and evaluation: ``grade(response, gold)``.

:mod:`~infoppo_cli.grading.extract` finds the final answer span, :mod:`~infoppo_cli.grading.verify`
normalises gold and prediction alike and asks math-verify whether they are equal (its ``POLICY`` table
lists every decision), and :mod:`~infoppo_cli.grading.pool` grades many responses in worker processes
with a hard per-response deadline. :mod:`~infoppo_cli.grading.canonical` writes answers one way for
evaluation's bookkeeping (the stored gold, maj@k's votes).
"""

from infoppo_cli.grading.extract import Extraction, extract, extract_answer, final_text
from infoppo_cli.grading.pool import GradingPool, default_workers, explain_many, grade_many
from infoppo_cli.grading.verify import (
    DEFAULT_TIMEOUT,
    POLICY,
    REASONS,
    Reading,
    Verdict,
    explain,
    grade,
    inner_timeout_seconds,
    normalise_answer,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "POLICY",
    "REASONS",
    "Extraction",
    "GradingPool",
    "Reading",
    "Verdict",
    "default_workers",
    "explain",
    "explain_many",
    "extract",
    "extract_answer",
    "final_text",
    "grade",
    "grade_many",
    "inner_timeout_seconds",
    "normalise_answer",
]
