"""What every Ray worker of a run does before anything else (Ray's ``worker_process_setup_hook``), one
function per device (``device.py`` names it)."""

from __future__ import annotations

from infoppo_cli.openrlhf_adapter.build_locks import clear_stale_build_locks
from infoppo_cli.openrlhf_adapter.cpu.stand_ins import install as install_stand_ins


def gpu_worker() -> None:
    clear_stale_build_locks()


def cpu_worker() -> None:
    install_stand_ins()  # before the worker imports OpenRLHF (which imports flash-attn)
    clear_stale_build_locks()
