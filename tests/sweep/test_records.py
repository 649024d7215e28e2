"""A run's status follows from its phases; its next and running phase are found by status."""

from __future__ import annotations

import pytest

from infoppo_cli.sweep.records import PhaseRecord, RunRecord


def run_with(*statuses: str) -> RunRecord:
    pairs = zip(("train", "eval"), statuses, strict=True)
    phases = [PhaseRecord(name, ["infoppo", name], status) for name, status in pairs]
    return RunRecord("r", "gamma", 0.99, "0.99", "info", "infoppo", 1, {}, "/runs/r", phases)


@pytest.mark.parametrize(
    ("statuses", "status"),
    [
        (("pending", "pending"), "pending"),
        (("running", "pending"), "running"),
        (("done", "running"), "running"),
        (("done", "pending"), "pending"),
        (("done", "done"), "done"),
        (("done", "failed"), "failed"),
        (("failed", "running"), "failed"),
    ],
)
def test_the_status_of_a_run_follows_from_its_phases(statuses: tuple[str, str], status: str) -> None:
    run = run_with(*statuses)
    run.refresh_status()
    assert run.status == status


def test_the_next_and_the_running_phase() -> None:
    run = run_with("done", "running")
    assert run.next_phase() is run.phase("eval") and run.running_phase() is run.phase("eval")
    finished = run_with("done", "done")
    assert finished.next_phase() is None and finished.running_phase() is None
