"""The launcher a sweep request chose (``--launcher``, ``--ray-dashboard``), made for one sweep."""

from __future__ import annotations

from infoppo_cli.sweep.grid import SweepPlan
from infoppo_cli.sweep.launcher import Launcher
from infoppo_cli.sweep.local import LocalLauncher
from infoppo_cli.sweep.ray_jobs import RayJobLauncher
from infoppo_cli.sweep.request import SlurmSettings, SweepRequest
from infoppo_cli.sweep.slurm import SlurmLauncher


def make_launcher(request: SweepRequest, plan: SweepPlan, sweep_id: str, slurm: SlurmSettings) -> Launcher:
    """Local child processes, Ray jobs on ``--ray-dashboard`` or SLURM jobs, as ``request`` chose (its
    SLURM settings checked already)."""
    chosen = request.chosen_launcher
    if chosen == "ray":
        return RayJobLauncher(str(request.ray_dashboard), sweep_id)
    if chosen == "slurm":
        return SlurmLauncher(plan.out_dir, slurm, checked=True)
    return LocalLauncher()
