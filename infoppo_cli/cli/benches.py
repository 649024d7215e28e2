"""``infoppo benches``: print the benchmark registry (thin layer over ``infoppo_cli.eval.benchmarks``)."""

from __future__ import annotations

from infoppo_cli.cli.console import console
from infoppo_cli.cli.eval import bench_table
from infoppo_cli.cli.options import BenchesFileOption


def benches_command(benches_file: BenchesFileOption = None) -> None:
    """List the benchmarks `infoppo eval --bench` and `train --eval-bench` accept, with sources, sizes
    and licences, and how to use a local file."""
    console.print(bench_table(benches_file))
