"""``infoppo benches``: print the benchmark registry (thin layer over ``infoppo_cli.benchmarks``)."""

from __future__ import annotations

from infoppo_cli.benchmarks import bench_table
from infoppo_cli.console import console


def benches_command() -> None:
    """List the benchmarks `infoppo eval --bench` accepts, with sources, sizes and licences."""
    console.print(bench_table())
