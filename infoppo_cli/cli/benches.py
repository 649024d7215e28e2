"""``infoppo benches``: print the benchmark registry (thin layer over ``infoppo_cli.eval.benchmarks``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infoppo_cli.cli.console import console
from infoppo_cli.cli.eval import bench_table
from infoppo_cli.cli.options import settings_of, with_settings
from infoppo_cli.schema import benches_file_option


@dataclass
class BenchesOptions:
    """``infoppo benches``' options."""

    benches_file: str | None = benches_file_option()


@with_settings(BenchesOptions)
def benches_command(**options: Any) -> None:
    """List the benchmarks `infoppo eval --bench` and `train --eval-bench` accept, with sources, sizes
    and licences, and how to use a local file."""
    console.print(bench_table(settings_of(options, BenchesOptions).benches_file))
