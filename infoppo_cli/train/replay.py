"""``infoppo train --replay RUN``: the plan rebuilt from ``RUN/manifest.json``, and what changed since."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.train.plan import TrainPlan, TrainRequest

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Recorded:
    """What a finished (or started) run recorded about itself."""

    run_dir: Path
    request: dict[str, Any]
    flags: dict[str, Any]
    command: list[str]
    versions: dict[str, Any]
    git_commit: str | None


def read_recorded(run_dir: str) -> Recorded:
    """The manifest of ``run_dir``; a missing or unreadable one is a one-line :class:`UsageError`."""
    root = Path(run_dir).expanduser()
    path = root / MANIFEST if root.is_dir() else root
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        config = body["config"]
        return Recorded(
            run_dir=path.parent.resolve(),
            request=dict(config["request"]),
            flags=dict(config["openrlhf_flags"]),
            command=list(body["command"]),
            versions=dict(body.get("versions") or {}),
            git_commit=body.get("git_commit"),
        )
    except FileNotFoundError:
        raise UsageError(
            f"--replay {run_dir}: no {MANIFEST} there (not an `infoppo train` run directory)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--replay {run_dir}: {path} is not a readable manifest ({exc})") from None


def replay_request(recorded: Recorded, overrides: list[str], output_dir: str | None = None) -> TrainRequest:
    """The recorded request, pinned to the resolved data file and run directory, plus ``--set``s."""
    known = {f.name for f in fields(TrainRequest)}
    values = {key: value for key, value in recorded.request.items() if key in known}
    values["data"] = str(recorded.flags.get("data.prompt_dataset", values.get("data")))
    values["output_dir"] = output_dir or str(Path(str(recorded.flags["ckpt.path"])).parent)
    values["seed"] = int(recorded.flags.get("train.seed", values.get("seed") or 42))
    values["overrides"] = [*values.get("overrides", []), *overrides]
    return TrainRequest(**values)


def differences(recorded: Recorded, plan: TrainPlan) -> list[tuple[str, str, str]]:
    """``(what, recorded, now)`` for every flag, version and the commit that differ."""
    from infoppo_cli.resources import stack_versions
    from infoppo_cli.train.run import git_commit

    rows: list[tuple[str, str, str]] = []
    for key in sorted(set(recorded.flags) | set(plan.flags)):
        old, new = recorded.flags.get(key), plan.flags.get(key)
        if json.dumps(old) != json.dumps(new, default=str):
            rows.append((f"--{key}", _shown(old), _shown(new)))
    now = stack_versions()
    for name in sorted(set(recorded.versions) | set(now)):
        if recorded.versions.get(name) != now.get(name):
            rows.append((f"version of {name}", _shown(recorded.versions.get(name)), _shown(now.get(name))))
    commit = git_commit()
    if recorded.git_commit != commit:
        rows.append(("git commit", _shown(recorded.git_commit), _shown(commit)))
    if recorded.command != plan.command() and not any(row[0].startswith("--") for row in rows):
        rows.append(("command", "recorded", "differs (infoppo's own settings or the interpreter)"))
    return rows


def _shown(value: Any) -> str:
    return "(absent)" if value is None else str(value)
