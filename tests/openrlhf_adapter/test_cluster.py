"""With --address, a Ray task on every node checks that it sees the run's files (local Ray, CPU)."""

from __future__ import annotations

import argparse

import pytest
from openrlhf_fixtures import method_settings

from infoppo_cli.openrlhf_adapter.cluster import PROBE_PREFIX, local_paths, refusal, unshared_paths
from infoppo_cli.openrlhf_adapter.launch import check_cluster_storage


@pytest.mark.slow
def test_every_node_sees_shared_files_and_a_missing_one_refuses(local_ray, tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text("{}\n")
    assert unshared_paths(tmp_path / "run", [str(data)]) == {}
    assert not list((tmp_path / "run").glob(f"{PROBE_PREFIX}*"))  # the probe is removed
    # a path only this process has (a node with other disks sees it the same way):
    data.unlink()
    misses = unshared_paths(tmp_path / "run", [str(data)])
    ((node, items),) = misses.items()
    assert items == [str(data)]
    message = refusal(misses)
    assert message.startswith("infoppo: with --address every node must see") and str(data) in message
    assert "\n" not in message and node in message


@pytest.mark.slow
def test_the_launch_checks_only_cluster_runs(local_ray, tmp_path):
    metrics = str(tmp_path / "run" / "metrics.jsonl")
    check_cluster_storage(
        method_settings(metrics_path=metrics), ["--data.prompt_dataset", "/nowhere"]
    )  # local Ray
    assert not (tmp_path / "run").exists()
    settings = method_settings(metrics_path=metrics, ray_address="auto")
    check_cluster_storage(settings, ["--data.prompt_dataset", str(tmp_path)])  # seen: no refusal


def test_local_paths_are_the_existing_absolute_ones(tmp_path):
    args = argparse.Namespace(
        **{"reward.remote_url": [str(tmp_path)], "actor.model_name_or_path": "Qwen/Qwen3-4B"}
    )
    assert local_paths(args) == [str(tmp_path)]
