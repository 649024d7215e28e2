"""With ``--address``, every node must see the run's files: checked once, at start.

On a Ray cluster, OpenRLHF's trainer and model workers run on any node: the trainer appends
``metrics.jsonl`` and reads the prompts, the actor writes checkpoints under the output directory,
and each vLLM engine imports the reward function by its path. A path that exists only on the
driver's machine fails hours later, or silently writes results where nobody looks. So the driver
writes a probe file into the output directory, and one Ray task pinned to each alive node reads it
back and checks that the other paths exist there too; any miss refuses the run with one message.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

PROBE_PREFIX = ".infoppo-storage-probe-"
PATH_FLAGS = ("reward.remote_url", "data.prompt_dataset", "actor.model_name_or_path", "eval.dataset")
"""OpenRLHF flags whose value can be a local path that a worker on any node opens."""


@ray.remote(num_cpus=0)
def _what_this_node_misses(probe: str, token: str, paths: list[str]) -> list[str]:
    try:
        seen = Path(probe).read_text(encoding="utf-8") == token
    except OSError:
        seen = False
    misses = [] if seen else [f"the output directory {Path(probe).parent}"]
    return misses + [path for path in paths if not Path(path).exists()]


def local_paths(openrlhf_args: argparse.Namespace) -> list[str]:
    """The absolute local paths among the :data:`PATH_FLAGS` values (a Hub id is not a path)."""
    found = []
    for flag in PATH_FLAGS:
        value = getattr(openrlhf_args, flag, None)
        for item in value if isinstance(value, list) else [value]:
            if item and Path(str(item)).is_absolute() and Path(str(item)).exists():
                found.append(str(item))
    return found


def unshared_paths(output_dir: str | Path, paths: list[str]) -> dict[str, list[str]]:
    """For each alive node of the connected Ray cluster that misses something: what it misses."""
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    probe = output / f"{PROBE_PREFIX}{token}"
    probe.write_text(token, encoding="utf-8")
    try:
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        refs = [
            _what_this_node_misses.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            ).remote(str(probe), token, paths)
            for node in nodes
        ]
        answers = ray.get(refs, timeout=300)
    finally:
        probe.unlink(missing_ok=True)
    return {node["NodeManagerAddress"]: miss for node, miss in zip(nodes, answers, strict=True) if miss}


def refusal(misses: dict[str, list[str]]) -> str:
    """The one-line message that stops a cluster run whose files some node cannot see."""
    listed = "; ".join(f"node {node} cannot see {', '.join(items)}" for node, items in misses.items())
    return (
        f"infoppo: with --address every node must see the run's files, but {listed}. Put --output-dir, "
        "the data, the model and this infoppo checkout on a filesystem mounted at the same path on "
        "every node (NFS, Lustre, ...)"
    )
