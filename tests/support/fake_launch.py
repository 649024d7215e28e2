"""A real plan of a qwen3-4b run whose launch is a child Python process running ``script`` (it stands for
OpenRLHF), with the GPU requirement waived: everything before and around the launch is the product's
(the plan, the resume checks, the run lock, the manifest, ``train.log``)."""

from __future__ import annotations

import json
import sys

from infoppo_cli.train.plan import TrainPlan, TrainRequest, plan_training


def prompts_file(tmp_path) -> str:
    """64 prompts (one RL step's at the preset's shape) in ``tmp_path/prompts.jsonl``, written once."""
    data = tmp_path / "prompts.jsonl"
    if not data.exists():
        data.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(64)))
    return str(data)


def fake_plan(tmp_path, monkeypatch, script: str = "pass", **request) -> TrainPlan:
    """The plan of ``tmp_path/run`` (no in-training eval unless asked), launching ``script``."""
    request.setdefault("eval_bench", "none")  # no benchmark download here (offline)
    plan = plan_training(
        TrainRequest(
            preset="qwen3-4b", data=prompts_file(tmp_path), output_dir=str(tmp_path / "run"), **request
        )
    )
    monkeypatch.setattr("infoppo_cli.train.run.require_gpu", lambda plan: None)
    monkeypatch.setattr(TrainPlan, "command", lambda self: [sys.executable, "-c", script])
    return plan
