"""A sweep directory that was moved or copied: its recorded paths re-rooted to where it is now.

``sweep.json`` records absolute paths (each run's directory, and the train requests and eval commands
that name it), so that a run can be found and reported from anywhere. When the file is read from another
directory than the one it records, every path under the recorded one is rewritten to the same place under
the new one: the runs resume where they now are, with the commands they would have had there. Only a
phase that is still running as a job or process cannot follow, because it writes to the old paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infoppo_cli.sweep.liveness import process_runs_in
from infoppo_cli.sweep.records import RunRecord


def recorded_root(document: dict[str, Any]) -> str | None:
    """The sweep directory the runs were recorded in (the one parent of their directories), if any."""
    parents = {str(Path(run["output_dir"]).parent) for run in document["runs"]}
    if len(parents) != 1:
        return None
    (root,) = parents
    return root if Path(root).is_absolute() else None


def reroot_document(document: dict[str, Any], root: Path) -> str | None:
    """Rewrite the paths of a parsed ``sweep.json`` recorded under another directory to lie under
    ``root``; returns the old directory, or None when the file is where it was written."""
    old = recorded_root(document)
    new = str(root)
    if old is None or old == new:
        return None

    def moved(tokens: list[str]) -> list[str]:
        return [rerooted(token, old, new) for token in tokens]

    def moved_values(fields: dict[str, Any]) -> dict[str, Any]:
        return {
            key: rerooted(value, old, new)
            if isinstance(value, str)
            else moved(value)
            if isinstance(value, list) and all(isinstance(item, str) for item in value)
            else value
            for key, value in fields.items()
        }

    for run in document["runs"]:
        run["output_dir"] = rerooted(run["output_dir"], old, new)
        for phase in run["phases"]:
            for argv in ("command", "launched"):
                if phase.get(argv) is not None:
                    phase[argv] = moved(phase[argv])
            if phase.get("request") is not None:
                phase["request"] = moved_values(phase["request"])
    document["command"] = moved(document["command"])
    options = document["settings"].get("train_options")
    if isinstance(options, dict):
        document["settings"]["train_options"] = moved_values(options)
    return old


def rerooted(token: str, old: str, new: str) -> str:
    """``token`` with a leading ``old`` directory replaced by ``new`` (also in ``--option=PATH``)."""
    if token == old:
        return new
    if token.startswith(old.rstrip("/") + "/"):
        return new + token[len(old.rstrip("/")) :]
    name, equals, value = token.partition("=")
    if equals and name.startswith("--"):
        changed = rerooted(value, old, new)
        return f"{name}={changed}" if changed != value else token
    return token


def left_running(runs: list[RunRecord], old: str) -> str | None:
    """Why a sweep moved from ``old`` cannot resume here: a run it left running writes to ``old``."""
    for run in runs:
        phase = run.running_phase()
        if phase is None:
            continue
        old_dir = str(Path(old) / Path(run.output_dir).name)
        if phase.slurm_job_id:
            job = f"SLURM job {phase.slurm_job_id}"
        elif phase.ray_job_id:
            job = f"Ray job {phase.ray_job_id}"
        elif phase.pid is not None and process_runs_in(phase.pid, old_dir):
            job = f"process {phase.pid}"
        else:
            continue
        return (
            f"run {run.name} was running as {job} when the sweep was moved from {old}, and it writes "
            f"there; move the directory back to {old} to re-attach to it"
        )
    return None
