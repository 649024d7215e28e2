"""Where a run's experiment tracking goes, decided before launch: wandb online, offline, or off.

OpenRLHF turns wandb on when ``logger.wandb.key`` is set (infoppo sets it to a pointer when a key is
given or ``WANDB_API_KEY`` is in the environment) and calls ``wandb.init`` in the trainer process,
minutes into the run. Without a network to wandb's server that call raises and the run is lost, so
the plan probes the server first: when it does not answer, the run logs offline (``WANDB_MODE=offline``)
with a warning in the plan, and ``wandb sync`` uploads it later. A ``WANDB_MODE`` the user set is kept
as it is. wandb writes its files under the run directory (``WANDB_DIR``), never into a Ray worker's
working directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

WANDB_SERVER = "https://api.wandb.ai"


def wandb_server() -> str:
    """The server wandb would use: ``WANDB_BASE_URL`` or wandb's own."""
    return os.environ.get("WANDB_BASE_URL") or WANDB_SERVER


def tracking_environment(flags: dict[str, Any], run_dir: Path) -> tuple[dict[str, str], list[str]]:
    """The environment the launched run needs for wandb, and the plan's warnings about it."""
    if not flags.get("logger.wandb.key"):
        return {}, []
    env = {"WANDB_DIR": str(run_dir)}
    if os.environ.get("WANDB_MODE"):
        return env, []
    from infoppo_cli.eval.hub import probe

    failure = probe(wandb_server())
    if failure is None:
        return env, []
    env["WANDB_MODE"] = "offline"
    warning = (
        f"wandb: {wandb_server()} does not answer ({failure}); this run logs to wandb offline, under "
        f"{run_dir / 'wandb'} (upload it later with `wandb sync`)"
    )
    return env, [warning]


def wandb_mode(flags: dict[str, Any], env: dict[str, str]) -> str:
    """The plan's line for wandb."""
    if not flags.get("logger.wandb.key"):
        return "off"
    mode = env.get("WANDB_MODE") or os.environ.get("WANDB_MODE") or "online"
    return f"{mode} (the key reaches the run as $WANDB_API_KEY only, never a file or Ray's logs)"
