"""What would refuse launching a plan on this machine, each problem found and told on its own line.

A real launch stops at the first problem; a dry run shows the whole plan first and then every problem,
so that one look says everything to fix (``infoppo train --dry-run``, and ``infoppo sweep --dry-run``
for every grid point). The checks are the launch's own (``train/run.py``): the plan's (a Hub model that
can be neither downloaded nor found in the cache, ``--wandb-mode online`` without a key), the run
directory's resume state, and each in-training benchmark. Options that cannot be planned at all (a bad
value, a missing data file, an output path that is no directory) stay one ``error:`` line, at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from infoppo_cli.errors import InfoppoError
from infoppo_cli.train.eval_set import load_eval_problems
from infoppo_cli.train.plan import TrainPlan
from infoppo_cli.train.run import check_resume

BenchResults = dict[tuple[str, str | None, str | None], str | None]
"""A benchmark's load problem (``None``: it loads) by (name, file, benches file): one load per sweep."""


def _attempt(problems: list[str], check: Callable[[], Any]) -> None:
    try:
        check()
    except InfoppoError as exc:
        problems.append(str(exc))


def _bench_problem(plan: TrainPlan, name: str, file: str | None) -> str | None:
    assert plan.evaluation is not None
    try:
        load_eval_problems(replace(plan.evaluation, benches={name: file}))
    except InfoppoError as exc:
        return str(exc)
    return None


def launch_problems(plan: TrainPlan, benches: BenchResults | None = None) -> list[str]:
    """Every problem that would refuse launching ``plan`` here (see the module), in the order a launch
    meets them; ``benches`` keeps each benchmark's result across the plans of one sweep."""
    problems = list(plan.problems)
    _attempt(problems, lambda: check_resume(plan))
    evaluation = plan.evaluation
    results = {} if benches is None else benches
    for name, file in (evaluation.benches if evaluation else {}).items():
        if plan.unbuilt_task is not None and (name, file) == (plan.unbuilt_task.name, None):
            continue  # the task's held-out problems: built by the first real run (a dry run builds none)
        key = (name, file, evaluation.benches_file if evaluation else None)
        if key not in results:
            results[key] = _bench_problem(plan, name, file)
        if results[key] is not None:
            problems.append(str(results[key]))
    return problems
