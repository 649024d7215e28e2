"""The model ``infoppo eval`` evaluates when no ``--model`` is given: the final model of the newest
``infoppo train`` run under ``./runs``.

A candidate is a run directory (it holds ``manifest.json``) one or two levels below the root whose
``final/`` holds a Hugging Face model (``config.json``). A run whose manifest says it finished comes
before any other (a failed, interrupted or still running run may hold an older ``final/``, or one being
written); among equals the newest wins, by the manifest's end time (else its last start), else by when
``final/`` was written.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from infoppo_cli.errors import UsageError
from infoppo_cli.rundir import FINAL_DIR, RUNS_ROOT, RunDir, read_manifest

FINISHED = "finished"
SHOWN_OTHERS = 3
"""How many other candidates the note beside the chosen model lists."""


@dataclass(frozen=True)
class TrainedModel:
    """A run's final model that ``infoppo eval`` could evaluate."""

    path: Path
    """``RUN/final``."""
    status: str
    """The manifest's status (``finished``, ``failed``, ...); ``unknown`` when it records none."""
    time: datetime.datetime
    """When the run ended (its last start while it has not), else when ``final/`` was written (UTC)."""

    @property
    def finished(self) -> bool:
        return self.status == FINISHED

    def describe(self) -> str:
        """``runs/a/final (finished, 2026-01-02 05:00 UTC)``: the path, status and time."""
        return f"{self.path} ({self.status}, {self.time:%Y-%m-%d %H:%M} UTC)"


def _run_dirs(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    found = []
    for child in sorted(root.iterdir()):
        if not child.is_dir():
            continue
        if RunDir(child).is_run():
            found.append(child)
        else:  # a folder of runs: runs/<group>/<run>
            found += [grand for grand in sorted(child.iterdir()) if grand.is_dir() and RunDir(grand).is_run()]
    return found


def _parsed(text: object) -> datetime.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
    return aware.astimezone(datetime.UTC)


def _candidate(run_dir: Path) -> TrainedModel | None:
    final = run_dir / FINAL_DIR
    config = final / "config.json"
    if not config.is_file():
        return None
    try:
        manifest = read_manifest(run_dir)
        record = manifest.record if manifest is not None else {}
    except UsageError:  # an unreadable manifest: still a model, of unknown status
        record = {}
    status = record.get("status")
    written = datetime.datetime.fromtimestamp(config.stat().st_mtime, datetime.UTC)
    time = _parsed(record.get("end_time")) or _parsed(record.get("last_start_time")) or written
    return TrainedModel(final, status if isinstance(status, str) and status else "unknown", time)


def trained_models(root: str | Path = RUNS_ROOT) -> list[TrainedModel]:
    """Every run's final model under ``root``, the one to evaluate first (see the module)."""
    found = [model for model in map(_candidate, _run_dirs(Path(root))) if model is not None]
    return sorted(found, key=lambda model: (model.finished, model.time), reverse=True)


NO_MODEL = (
    "no run under {root}/ has a final/ model (from `infoppo train`); pass --model PATH_OR_HF_ID (a model "
    "directory or a Hugging Face id), or --responses FILE to grade existing responses"
)


@dataclass(frozen=True)
class ModelChoice:
    """The model picked for an ``infoppo eval`` without ``--model`` (``None`` when there is none), the
    other candidates (the next ones to choose first) and the root searched."""

    chosen: TrainedModel | None
    others: tuple[TrainedModel, ...]
    root: Path

    @property
    def problem(self) -> str | None:
        """The one line that stops a real run when there is nothing to evaluate."""
        return None if self.chosen else "no model to evaluate: " + NO_MODEL.format(root=self.root)

    def why(self) -> str:
        assert self.chosen is not None
        if self.chosen.finished:
            return f"the newest finished run under {self.root}/"
        return f"the newest run under {self.root}/ with a final/ model (none has finished)"

    def others_text(self) -> str:
        """``runs/b/final (failed, ...), ... and 2 more``, newest first; empty without others."""
        newest = sorted(self.others, key=lambda model: model.time, reverse=True)
        shown = ", ".join(model.describe() for model in newest[:SHOWN_OTHERS])
        more = len(newest) - SHOWN_OTHERS
        return shown + (f" and {more} more" if more > 0 else "")

    def row(self) -> str:
        """The plan's model row: the model and why it, or ``no model: ...``."""
        if self.chosen is None:
            return "no model: " + NO_MODEL.format(root=self.root)
        return f"{self.chosen.describe()}: {self.why()} (no --model given)"

    def note(self) -> str:
        """What a real run says before it starts: the model, why it, and the other recent ones."""
        assert self.chosen is not None
        note = (
            f"no --model given: evaluating {self.chosen.describe()}, {self.why()}; "
            "--model PATH_OR_HF_ID picks another"
        )
        return note + (f". Other runs with a final model: {self.others_text()}" if self.others else "")


def choose_model(root: str | Path = RUNS_ROOT) -> ModelChoice:
    """The model to evaluate without ``--model`` (see the module)."""
    models = trained_models(root)
    return ModelChoice(models[0] if models else None, tuple(models[1:]), Path(root))
