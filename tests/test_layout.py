"""The package's shape, checked: imports only point down the layers, modules stay short, Rich stays in
``cli/``, and no behaviour is chosen by comparing a method's name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "infoppo_cli"

LAYERS = {
    "infoppo_cli": 0,  # the root package itself: only __version__
    "errors": 0,
    "atomic": 1,
    "resources": 1,
    "infotime": 1,
    "rundir": 2,
    "grading": 3,
    "data": 4,
    "openrlhf_adapter": 5,
    "eval": 6,
    "train": 7,
    "inspect": 8,
    "sweep": 8,
    "report": 8,
    "cli": 9,
}
"""Each unit of the package and its layer: a module may import its own unit and lower layers only."""

MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def unit_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts == ("__main__",):
        return "cli"  # `python -m infoppo_cli` is the command line
    return parts[0] if len(parts) > 1 or parts[0] != "__init__" else "infoppo_cli"


def imported_units(path: Path) -> set[str]:
    units = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            if node.module == "infoppo_cli":
                names = [f"infoppo_cli.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "infoppo_cli":
                units.add(parts[1] if len(parts) > 1 and parts[1] in LAYERS else "infoppo_cli")
    return units


def test_every_unit_has_a_layer():
    assert {unit_of(path) for path in MODULES} <= set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_the_layers(path):
    own = unit_of(path)
    upward = {unit for unit in imported_units(path) if unit != own and LAYERS[unit] >= LAYERS[own]}
    assert not upward, f"{path.name} ({own}) imports {sorted(upward)}: same or higher layer"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_400_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400


def test_rich_is_rendered_only_under_cli():
    rich_users = [p for p in MODULES if "rich" in imported_top_level(p) and unit_of(p) != "cli"]
    assert not rich_users


def imported_top_level(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
    return names


def test_at_most_six_flat_modules():
    flat = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(flat) <= 6, flat


METHOD_NAME_TEST = re.compile(
    r"""(==|!=|\bin\b)\s*\(?\s*["'](infoppo|ppo|dapo|dapo-ft|info-gae|info-clip)["']"""
)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_behaviour_is_chosen_by_a_method_name(path):
    hits = [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if METHOD_NAME_TEST.search(line)
    ]
    assert not hits
