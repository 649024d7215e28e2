"""The grader shared by the training reward and evaluation: ``grade(response, gold)``.

:mod:`~infoppo_cli.grading.extract` finds the final answer span (:mod:`~infoppo_cli.grading.parts`
decides which boxes form one answer), :mod:`~infoppo_cli.grading.normalise` writes gold and prediction
alike (and, for evaluation's bookkeeping, the stored gold and maj@k's votes),
:mod:`~infoppo_cli.grading.verify` asks math-verify whether they are equal (``POLICY``, in
:mod:`~infoppo_cli.grading.policy`, lists every decision), comparing labelled parts part by part and
decimals at their written precision (:mod:`~infoppo_cli.grading.rounding`), and
:mod:`~infoppo_cli.grading.pool` grades many responses in worker processes with a hard per-response
deadline.
"""

from infoppo_cli.grading.extract import Extraction, extract, extract_answer, final_text
from infoppo_cli.grading.normalise import normalise_answer
from infoppo_cli.grading.policy import POLICY
from infoppo_cli.grading.pool import GradingPool, default_workers, explain_many, grade_many
from infoppo_cli.grading.verify import (
    DEFAULT_TIMEOUT,
    REASONS,
    Reading,
    Verdict,
    explain,
    grade,
    inner_timeout_seconds,
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
