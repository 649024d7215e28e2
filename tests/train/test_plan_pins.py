"""The exact OpenRLHF command of every preset x method, and the run configuration it reads, pinned.

A change to presets, methods or the plan shows up here as a diff of the command a researcher would
launch. After a deliberate change, regenerate the pins with ``INFOPPO_UPDATE_PINS=1 pytest
tests/train/test_plan_pins.py`` and review the diff of ``dry_run_pins.json`` like code.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from infoppo_cli.train.methods import methods
from infoppo_cli.train.plan import REWARD_FILE, TrainRequest, plan_training
from infoppo_cli.train.presets import preset_names

PINS = Path(__file__).with_name("dry_run_pins.json")
PROMPTS = 1000  # the warm-up ratio depends on the number of prompts


@pytest.fixture(scope="module")
def prompt_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "prompts.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"p{i}", "label": "1"}) + "\n" for i in range(PROMPTS)))
    return path


def _placeholders(out: Path, data: Path, tasks: list[Path]) -> dict[str, str]:
    return {
        str(out): "<run>",
        str(data): "<data>",
        **{str(task): "<task>" for task in tasks},  # the presets' tasks in this session's cache
        str(REWARD_FILE): "<reward>",
        sys.executable: "<python>",
    }


def _replaced(value: Any, replace: dict[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    for old, new in replace.items():
        value = value.replace(old, new)
    return value


def pinned_run(preset: str, method: str, data: Path, out: Path, tasks: list[Path]) -> dict[str, Any]:
    """The launched command and the run's configuration (``RUN/config.json``) it reads."""
    plan = plan_training(TrainRequest(preset=preset, method=method, data=str(data), output_dir=str(out)))
    replace = _placeholders(out, data, tasks)
    return {
        "command": [_replaced(token, replace) for token in plan.command()],
        "config": {key: _replaced(value, replace) for key, value in plan.infotime.items()},
    }


def all_commands(data: Path, out: Path, tasks: list[Path]) -> dict[str, dict[str, Any]]:
    return {
        f"{preset} {method}": pinned_run(preset, method, data, out, tasks)
        for preset in preset_names()
        for method in methods()
    }


def test_every_dry_run_command_is_pinned(prompt_file, tmp_path, task_cache, chain_task, shortcut_task):
    tasks = [task_cache.directory, chain_task.directory, shortcut_task.directory]
    commands = all_commands(prompt_file, tmp_path / "run", tasks)
    if os.environ.get("INFOPPO_UPDATE_PINS"):
        PINS.write_text(json.dumps(commands, indent=1) + "\n")
    pinned = json.loads(PINS.read_text())
    assert sorted(commands) == sorted(pinned), "presets or methods were added or removed"
    changed = [name for name, command in commands.items() if command != pinned[name]]
    assert not changed, f"the commands of {', '.join(changed)} changed"  # names, not two long lists
