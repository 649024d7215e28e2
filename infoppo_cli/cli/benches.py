"""``infoppo benches``: print the benchmark registry (thin layer over ``infoppo_cli.eval.benchmarks``)."""

from __future__ import annotations

from typing import Annotated

import typer

from infoppo_cli.cli.console import console
from infoppo_cli.cli.eval import bench_table

BenchesFileOption = Annotated[
    str | None,
    typer.Option(
        "--benches-file",
        help="A TOML file of your own benchmarks, in the format of evaluation/benchmarks.toml.",
        show_default=False,
    ),
]


def benches_command(benches_file: BenchesFileOption = None) -> None:
    """List the benchmarks `infoppo eval --bench` and `train --eval-bench` accept, with sources, sizes
    and licences, and how to use a local file."""
    console.print(bench_table(benches_file))
