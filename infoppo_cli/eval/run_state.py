"""The state of one evaluation run (:class:`EvalRun`), shared by the runner (``run``), which fills it, and
the writer of its results (``outputs``), which reads it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.eval.sample_store import SampleStore
from infoppo_cli.eval.settings import EvalSettings

Progress = Callable[[str, int], Callable[[int], None]]
"""``progress(task name, total)`` returns ``advance(n)``; the CLI draws bars from it."""


def no_progress(name: str, total: int) -> Callable[[int], None]:
    return lambda n: None


@dataclass
class EvalRun:
    """State of one run: settings, output directory, problems, sample store."""

    settings: EvalSettings
    out_dir: Path
    problems: dict[str, list[Any]]
    store: SampleStore
    prompt_info: dict[str, Any] = dataclasses.field(default_factory=dict)
    progress: Progress = no_progress
    sources: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Each benchmark's source: this run's, and those of the benchmarks evaluated here earlier."""
    carried: dict[str, str | None] = dataclasses.field(default_factory=dict)
    """Benchmarks with samples here from earlier runs, not evaluated now (name -> file)."""
    config_written: bool = False
    fingerprint: str | None = None
    """The evaluated weights' fingerprint (``rundir/weights.py``); ``None`` for a Hub id or no model."""

    def __post_init__(self) -> None:
        self._gold = {(b, p.id): p.answer for b, ps in self.problems.items() for p in ps}

    def gold(self, bench: str, problem_id: str) -> str | None:
        """The normalised answer of a problem of this run, ``None`` for one it does not evaluate."""
        return self._gold.get((bench, problem_id))
