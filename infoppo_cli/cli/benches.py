"""``infoppo benches``: print the benchmark registry (thin layer over ``infoppo_cli.eval.benchmarks``)."""

from __future__ import annotations

from infoppo_cli.cli.console import console
from infoppo_cli.cli.eval import bench_table


def benches_command() -> None:
    """List the benchmarks `infoppo eval --bench` accepts, with sources, sizes and licences."""
    console.print(bench_table())
