"""The package's shape, checked: imports only point down the layers, no package's modules import each
other in a cycle, an import inside a function outside ``cli/`` says why it is lazy, modules stay short,
Rich stays in ``cli/``, and no behaviour is chosen by comparing a method's name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "infoppo_cli"

LAYERS = {
    "infoppo_cli": 0,  # the root package itself: only __version__
    "errors": 0,
    "hyperparameters": 0,  # the ranges planning checks without torch, and infotime too
    "atomic": 1,
    "records": 1,
    "resources": 1,
    "infotime": 1,
    "components": 2,  # the registry of method components: its entries call infotime's maths
    "schema": 1,
    "rundir": 2,
    "sweepdir": 3,  # a sweep directory's kinds and sweep.json schema: read by report/, written by sweep/
    "grading": 3,
    "data": 4,
    "openrlhf_adapter": 5,
    "tasks": 5,
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


def module_name(path: Path) -> str:
    parts = ("infoppo_cli", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_NAMES = {module_name(path): path for path in MODULES}


def imported_modules(path: Path) -> set[str]:
    """The modules of the package that ``path`` imports anywhere in it."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    return modules_imported_by(path.read_text(encoding="utf-8"), package) - {name}


def modules_imported_by(source: str, package: str) -> set[str]:
    """The package's modules that ``source`` (a module of ``package``) imports: at the top, inside
    functions, under ``TYPE_CHECKING``; ``from a.b import c`` is ``a.b.c`` when that is a module, else
    ``a.b``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: ``from ..x import y`` counts packages up from ``package``
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            while name not in MODULE_NAMES and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in MODULE_NAMES:
                found.add(name)
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per edge that closes one in a depth-first walk, each as its path (first module last
    again); none for an acyclic graph."""
    cycles: list[list[str]] = []
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        path.append(module)
        for imported in sorted(graph[module]):
            if imported in path:
                cycles.append([*path[path.index(imported) :], imported])
            elif imported not in done:
                walk(imported, path)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            walk(module, [])
    return cycles


PACKAGES = sorted({unit_of(path) for path in MODULES if path.parent != PACKAGE})


@pytest.mark.parametrize("unit", PACKAGES)
def test_no_import_cycle_inside_a_package(unit):
    inside = {name for name, path in MODULE_NAMES.items() if unit_of(path) == unit}
    graph = {name: imported_modules(MODULE_NAMES[name]) & inside for name in inside}
    cycles = [" -> ".join(cycle) for cycle in import_cycles(graph)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_a_cycle_is_reported_with_its_path():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert import_cycles(graph) == [["a", "b", "c", "a"], ["e", "e"]]
    assert import_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_lazy_relative_and_type_checking_imports_are_edges():
    source = (
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from infoppo_cli.eval.run import EvalRun\n"
        "def f():\n    from infoppo_cli.eval import outputs\n    from . import details\n"
        "    from ..grading import grade\n"
    )
    assert modules_imported_by(source, "infoppo_cli.eval") == {
        "infoppo_cli.eval.run",
        "infoppo_cli.eval.outputs",
        "infoppo_cli.eval.details",
        "infoppo_cli.grading",
    }


LAZY = re.compile(r"#.*?\blazy:(?P<reason>.*)$")
"""The comment that keeps an import inside a function: ``# lazy: <why>`` on its (first) line."""


def unexplained_lazy_imports(source: str) -> list[str]:
    """The imports inside a function body of ``source`` (nested ones, methods and ``async def`` too)
    without a ``# lazy: <reason>`` comment on their first line, each as ``LINE: what is missing``; the
    package's own modules (``infoppo_cli``, relative) are named as such."""
    lines = source.splitlines()
    found: dict[int, str] = {}
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            internal = getattr(node, "level", 0) > 0 or any(n.split(".")[0] == "infoppo_cli" for n in names)
            comment = LAZY.search(lines[node.lineno - 1])
            if comment is None:
                found[node.lineno] = "no `# lazy: <reason>` comment"
            elif not re.search(r"\w", comment["reason"]):
                found[node.lineno] = "`# lazy:` without a reason"
            else:
                continue
            if internal:
                found[node.lineno] += " (an infoppo module: hoist it, or say why not)"
    return [f"{line}: {problem}" for line, problem in sorted(found.items())]


def test_every_import_inside_a_function_outside_cli_says_why_it_is_lazy():
    """Lazy imports belong at the command line's edge (``cli/``); anywhere else an import sits at the top
    of its module unless its line says why not (``# lazy: <reason>``: a heavy dependency kept off the
    start-up or planning path, the process it must run in, an order it must follow)."""
    unexplained = [
        f"{path.relative_to(PACKAGE.parent)}:{problem}"
        for path in MODULES
        if unit_of(path) != "cli"
        for problem in unexplained_lazy_imports(path.read_text(encoding="utf-8"))
    ]
    assert not unexplained, "imports inside functions:\n" + "\n".join(unexplained)


def test_a_lazy_import_without_a_reason_is_found():
    source = (
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from infoppo_cli.eval.run import EvalRun\n"
        "def f():\n"
        "    import torch\n"  # 6: no comment
        "    import ray  # lazy: only for Ray engines\n"
        "    from infoppo_cli.data import hub\n"  # 8: an infoppo module, no comment
        "    from infoppo_cli.tasks import ensure_task  # lazy:\n"  # 9: no reason
        "    from . import details  # noqa: F401\n"  # 10: another comment is no reason
        "    from pyarrow import (  # lazy: heavy, kept off start-up\n        parquet,\n    )\n"
        "    from vllm import (\n        LLM,  # lazy: the reason belongs on the first line\n    )\n"  # 14
        "    def inner():\n        import sympy  # noqa: F401  # lazy: heavy, kept off start-up\n"
        "class C:\n    async def m(self):\n        import httpx\n"  # 21
    )
    assert unexplained_lazy_imports(source) == [
        "6: no `# lazy: <reason>` comment",
        "8: no `# lazy: <reason>` comment (an infoppo module: hoist it, or say why not)",
        "9: `# lazy:` without a reason (an infoppo module: hoist it, or say why not)",
        "10: no `# lazy: <reason>` comment (an infoppo module: hoist it, or say why not)",
        "14: no `# lazy: <reason>` comment",
        "21: no `# lazy: <reason>` comment",
    ]
    assert unexplained_lazy_imports("import torch\ndef f():\n    return torch.zeros(1)\n") == []


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


def test_at_most_seven_flat_modules():
    """The seventh, ``hyperparameters``, keeps torch out of planning: ``infotime`` imports torch."""
    flat = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(flat) <= 7, flat


def component_names() -> set[str]:
    """Every registered component and rho normalisation, and every shipped method."""
    from infoppo_cli.components import KINDS, NORMS
    from infoppo_cli.train.methods import methods

    return {name for entries in (*KINDS.values(), NORMS) for name in entries} | set(methods())


def name_comparisons(source: str, names: set[str]) -> list[str]:
    """``x == "name"``, ``"name" != x``, ``x in ("name", ...)`` and ``case "name":`` in ``source``, for a
    name of ``names``, as the lines they are on."""
    lines = source.splitlines()
    hits = []
    for node in ast.walk(ast.parse(source)):
        operands = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        for operand in operands:
            elements = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            if any(isinstance(e, ast.Constant) and e.value in names for e in elements):
                hits.append(lines[node.lineno - 1].strip())
                break
    return hits


COMPONENT_NAMES = component_names()
NOT_COMPONENTS = {
    "cli/data.py": {"all"},  # the data's language filter ``--lang all``, not the token mask
    "data/dapo.py": {"all"},
}
"""Values that share a component's name but are something else, by module."""


@pytest.mark.parametrize(
    "path", [p for p in MODULES if p.name != "components.py"], ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_behaviour_is_chosen_by_a_component_or_method_name(path):
    """Behaviour follows the registry's entries (``infoppo_cli/components.py``), never a name."""
    names = COMPONENT_NAMES - NOT_COMPONENTS.get(str(path.relative_to(PACKAGE)), set())
    assert not name_comparisons(path.read_text(encoding="utf-8"), names)


def test_a_name_comparison_is_found_in_every_form():
    source = (
        'if settings.clip == "adaptive":\n    pass\n'
        'if "dapo-ft" != method:\n    pass\n'
        'ok = norm in ("batch", "sentence")\n'
        'match advantage:\n    case "group_norm":\n        pass\n'
        'fine = kind == "lambda" or name in names\n'
    )
    hits = name_comparisons(source, {"adaptive", "dapo-ft", "batch", "group_norm"})
    assert hits == [
        'if settings.clip == "adaptive":',
        'if "dapo-ft" != method:',
        'ok = norm in ("batch", "sentence")',
        'case "group_norm":',
    ]
