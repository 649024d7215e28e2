"""Where a run's experiment tracking goes, decided before launch: its names, and wandb online, offline
or off.

Names: wandb's project (``--wandb-project``, default ``infoppo``), group (``--wandb-group``; a sweep
groups its runs by its own name) and run name (``--run-name``, default the run directory's name with the
method, not OpenRLHF's ``ppo_<month><day>T<hour>:<minute>``, which two runs started in the same minute
share). OpenRLHF writes TensorBoard's logs to ``<logger.tensorboard_dir>/<run name>``, so a run's are
under ``RUN/tensorboard/<run name>``.

Mode: OpenRLHF turns wandb on when ``logger.wandb.key`` is set (infoppo sets it to a pointer when a key
is given or ``WANDB_API_KEY`` is in the environment) and calls ``wandb.init`` in the trainer process,
minutes into the run. Without a network to wandb's server that call raises and the run is lost, so
by default the plan probes the server first: when it does not answer, the run logs offline
(``WANDB_MODE=offline``) with a warning in the plan, and ``wandb sync`` uploads it later; a
``WANDB_MODE`` the user set is kept as it is. ``--wandb-mode`` decides instead: ``offline`` logs
without an account or network, ``online`` needs a key and the server (a launch is refused without),
``disabled`` keeps wandb off even with a key. wandb writes its files under the run directory
(``WANDB_DIR``), never into a Ray worker's working directory.
"""

from __future__ import annotations

import netrc
import os
from pathlib import Path
from typing import Any, Protocol, get_args
from urllib.parse import urlparse

from infoppo_cli.data import hub
from infoppo_cli.errors import UsageError
from infoppo_cli.openrlhf_adapter.flags import SECRET_FLAGS, env_reference
from infoppo_cli.train.request import DEFAULT_WANDB_PROJECT, WANDB_MODE_CHOICES

WANDB_SERVER = "https://api.wandb.ai"
WANDB_MODES: tuple[str, ...] = get_args(WANDB_MODE_CHOICES)
KEY_FLAG = "logger.wandb.key"
KEY_VARIABLE = SECRET_FLAGS[KEY_FLAG]


class TrackingRequest(Protocol):
    """The tracking options of a ``TrainRequest``."""

    wandb_project: str | None
    wandb_group: str | None
    run_name: str | None
    wandb_mode: str | None


def wandb_server() -> str:
    """The server wandb would use: ``WANDB_BASE_URL`` or wandb's own."""
    return os.environ.get("WANDB_BASE_URL") or WANDB_SERVER


def default_run_name(run_dir: Path, method: str) -> str:
    """The run directory's name with the method (once: ``qwen3-4b-ppo-seed42`` already names it)."""
    name = run_dir.name
    return name if f"-{method}-" in f"-{name}-" else f"{name}-{method}"


def _check_names(req: TrackingRequest) -> None:
    if req.wandb_mode is not None and req.wandb_mode not in WANDB_MODES:
        raise UsageError(f"unknown --wandb-mode {req.wandb_mode!r}; choose one of: {', '.join(WANDB_MODES)}")
    for flag, value in (("--wandb-project", req.wandb_project), ("--wandb-group", req.wandb_group)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} is empty; give a name or leave the option out")
    name = req.run_name
    if name is not None and (not name.strip() or "/" in name or name in (".", "..")):
        raise UsageError(
            f"--run-name {name!r} cannot name a directory under RUN/tensorboard; give a name without '/'"
        )


def tracking_flags(
    req: TrackingRequest, run_dir: Path, method: str, overrides: dict[str, Any]
) -> dict[str, Any]:
    """OpenRLHF's ``logger.wandb.project/group/run_name`` for the run; an option and a ``--set`` of the
    same flag with two values are refused (one given alone is used)."""
    _check_names(req)
    given = {
        "logger.wandb.project": ("--wandb-project", req.wandb_project),
        "logger.wandb.group": ("--wandb-group", req.wandb_group),
        "logger.wandb.run_name": ("--run-name", req.run_name),
    }
    for key, (flag, value) in given.items():
        if value is not None and key in overrides and str(overrides[key]) != value:
            raise UsageError(f"{flag} {value} and --set {key}={overrides[key]} disagree; give it once")
    flags: dict[str, Any] = {
        "logger.wandb.project": req.wandb_project or DEFAULT_WANDB_PROJECT,
        "logger.wandb.run_name": req.run_name or default_run_name(run_dir, method),
    }
    if req.wandb_group:
        flags["logger.wandb.group"] = req.wandb_group
    return flags


def _stored_key() -> bool:
    """Whether ``wandb login`` left a key for the server in the netrc file wandb reads."""
    host = urlparse(wandb_server()).hostname or ""
    path = os.environ.get("NETRC") or str(Path.home() / ".netrc")
    try:
        return bool(host) and netrc.netrc(path).authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


def _chosen_mode(flags: dict[str, Any], mode: str, run_dir: Path) -> tuple[dict[str, str], list[str]]:
    """The environment and the launch problems of ``--wandb-mode MODE``."""
    if mode == "disabled":
        flags[KEY_FLAG] = None  # OpenRLHF starts no wandb without it
        return {"WANDB_MODE": "disabled"}, []
    problems = []
    if not flags.get(KEY_FLAG):
        if mode == "online" and not _stored_key():
            problems.append(
                f"--wandb-mode online needs a wandb API key: set ${KEY_VARIABLE}, run `wandb login`, or "
                "use --wandb-mode offline (no account needed; `wandb sync` uploads it later)"
            )
        flags[KEY_FLAG] = env_reference(KEY_VARIABLE)  # turns wandb on; wandb reads its key itself
    if mode == "online" and not problems:
        failure = hub.probe(wandb_server())
        if failure is not None:
            problems.append(
                f"--wandb-mode online: {wandb_server()} does not answer ({failure}); use --wandb-mode "
                "offline to log under the run directory and `wandb sync` it later"
            )
    return {"WANDB_DIR": str(run_dir), "WANDB_MODE": mode}, problems


def tracking_environment(
    flags: dict[str, Any], run_dir: Path, mode: str | None = None
) -> tuple[dict[str, str], list[str], list[str]]:
    """The environment the launched run needs for wandb, the plan's warnings about it, and what would
    refuse a launch (``--wandb-mode online`` without a key or a server). ``flags``' key pointer is set
    or removed as ``mode`` asks."""
    if mode is not None:
        env, problems = _chosen_mode(flags, mode, run_dir)
        return env, [], problems
    if not flags.get(KEY_FLAG):
        return {}, [], []
    env = {"WANDB_DIR": str(run_dir)}
    if os.environ.get("WANDB_MODE"):
        return env, [], []
    failure = hub.probe(wandb_server())
    if failure is None:
        return env, [], []
    env["WANDB_MODE"] = "offline"
    warning = (
        f"wandb: {wandb_server()} does not answer ({failure}); this run logs to wandb offline, under "
        f"{run_dir / 'wandb'} (upload it later with `wandb sync`)"
    )
    return env, [warning], []


def wandb_mode(flags: dict[str, Any], env: dict[str, str]) -> str:
    """The plan's line for wandb: its mode and the run's names there."""
    if not flags.get(KEY_FLAG):
        if env.get("WANDB_MODE") == "disabled":
            return "off (--wandb-mode disabled)"
        return f"off (on with ${KEY_VARIABLE}, or --wandb-mode offline|online)"
    mode = env.get("WANDB_MODE") or os.environ.get("WANDB_MODE") or "online"
    names = f"project {flags.get('logger.wandb.project')}"
    if flags.get("logger.wandb.group"):
        names += f", group {flags['logger.wandb.group']}"
    names += f", run {flags.get('logger.wandb.run_name')}"
    if mode == "online":
        names += "; the key reaches the run as $WANDB_API_KEY only, never a file or Ray's logs"
    return f"{mode}: {names}"


def tensorboard_dir(flags: dict[str, Any]) -> str | None:
    """Where OpenRLHF writes this run's TensorBoard logs: ``<tensorboard_dir>/<run name>``."""
    root = flags.get("logger.tensorboard_dir")
    return str(Path(root) / str(flags.get("logger.wandb.run_name"))) if root else None
