"""The patch table lists every replacement of upstream code that the package makes, and nothing else.

The package's sources are read with ``ast``: every assignment, ``setattr`` or ``delattr`` on an upstream
module or class (reached through an import or a name bound to one), every ``sys.modules`` entry, and every
assignment to an attribute named like a method of an OpenRLHF class (a method wrapped on one instance).
The package's upstream subclasses are then looked up (imported) to see which of their methods override
a private upstream method, or replace a public OpenRLHF method without calling ``super()``. Each finding
must be a row of ``openrlhf_adapter/patches.py`` naming the module that makes it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

import infoppo_cli
from infoppo_cli.openrlhf_adapter.patches import (
    CLASS_ATTRIBUTE,
    INSTANCE_ATTRIBUTE,
    KINDS,
    MODULE_ATTRIBUTE,
    PATCHES,
    PRIVATE_OVERRIDE,
    REPLACED_METHOD,
    STAND_IN_MODULE,
    lists,
)

UPSTREAM = ("openrlhf", "deepspeed", "torch", "ray", "transformers", "vllm")
PACKAGE = Path(infoppo_cli.__file__).parent
SOURCES = sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)
REBINDING = "rebinding"
"""A finding of :func:`rebindings` on an upstream module or class (the table's module and class rows)."""
NESTED = "upstream subclass inside a function"


def _is_upstream(name: str) -> bool:
    return name.split(".")[0] in UPSTREAM


@cache
def openrlhf_method_names() -> frozenset[str]:
    """The names of the methods OpenRLHF's classes define (read from its installed sources)."""
    root = Path(importlib.util.find_spec("openrlhf").submodule_search_locations[0])
    names = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = [
                    item for item in node.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                names.update(method.name for method in methods)
    return frozenset(name for name in names if not name.startswith("__"))


def _aliases(tree: ast.AST) -> dict[str, set[str]]:
    """The dotted names each name of the module may stand for: imports (``import a.b as m``, ``from a
    import b``) and names bound to an attribute chain over one (``cls = m.Experience``). Scopes are not
    told apart: a name bound to an upstream object anywhere in the module is taken as it everywhere."""
    aliases: dict[str, set[str]] = defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.name if alias.asname else alias.name.split(".")[0]
                aliases[alias.asname or bound].add(bound)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name].add(f"{node.module}.{alias.name}")
    assignments = [node for node in ast.walk(tree) if isinstance(node, ast.Assign)]
    for _ in range(3):  # names bound to names bound later in the source
        for node in assignments:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases[target.id] |= _resolve(node.value, aliases)
    return aliases


def _resolve(expr: ast.AST, aliases: dict[str, set[str]]) -> set[str]:
    """The dotted names an attribute chain stands for (a Ray actor class's ``__ray_actor_class__`` is the
    class itself)."""
    if isinstance(expr, ast.Name):
        return set(aliases.get(expr.id, ()))
    if isinstance(expr, ast.Attribute):
        owners = _resolve(expr.value, aliases)
        return owners if expr.attr == "__ray_actor_class__" else {f"{o}.{expr.attr}" for o in owners}
    return set()


def _is_call_of(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def _stored(node: ast.AST) -> Iterator[tuple[ast.AST, str | None]]:
    """``(owner, attribute)`` of each attribute that ``node`` sets or deletes (``None``: a name computed
    at run time); ``x.a[k] = v`` changes ``x.a``."""
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    elif _is_call_of(node, "setattr", "delattr") and len(node.args) >= 2:
        name = node.args[1]
        literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
        yield node.args[0], name.value if literal else None
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Subscript) and isinstance(part.value, ast.Attribute):
                yield part.value.value, part.value.attr
            elif isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Store):
                yield part.value, part.attr


def _sets_sys_modules(node: ast.AST) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else []
    return any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules" for t in targets)


def rebindings(source: str) -> set[tuple[str, str]]:
    """``(kind, target)`` for each change of upstream code in ``source`` that its text shows:
    ``(REBINDING, "module.name")`` (``"module.Class.*"`` for a name computed at run time),
    ``(STAND_IN_MODULE, "sys.modules")``, ``(INSTANCE_ATTRIBUTE, ".method")`` and
    ``(NESTED, "Class")`` for a class deriving from an upstream one inside a function (define it at
    module level, where :func:`overrides` sees it)."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found = set()
    for node in ast.walk(tree):
        if _sets_sys_modules(node):
            found.add((STAND_IN_MODULE, "sys.modules"))
        for owner, attribute in _stored(node):
            upstream = {name for name in _resolve(owner, aliases) if _is_upstream(name)}
            found.update((REBINDING, f"{name}.{attribute or '*'}") for name in upstream)
            if not upstream and attribute in openrlhf_method_names():
                found.add((INSTANCE_ATTRIBUTE, f".{attribute}"))
    for scope in ast.walk(tree):
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(scope):
                if isinstance(node, ast.ClassDef) and any(
                    _is_upstream(name) for base in node.bases for name in _resolve(base, aliases)
                ):
                    found.add((NESTED, node.name))
    return found


def _replaces_openrlhf_code(definer: type, method: ast.AST) -> bool:
    """Whether ``method``, overriding one that OpenRLHF's ``definer`` defines, never calls ``super()``."""
    calls_super = any(_is_call_of(node, "super") for node in ast.walk(method))
    return definer.__module__.startswith("openrlhf") and not calls_super


def overrides(module: ModuleType, source: str) -> set[tuple[str, str]]:
    """``(PRIVATE_OVERRIDE | REPLACED_METHOD, "module.Class.method")`` for each method of the module's
    classes (``source`` read with ``ast``, the classes looked up in ``module``) that overrides a private
    method of an upstream class, or a public method (or ``__init__``) of an OpenRLHF class without
    calling ``super()``."""
    found = set()
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, node.name)
        cls = getattr(cls, "__ray_actor_class__", cls)
        for item in node.body:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            name = item.name
            definer = next((base for base in cls.__mro__[1:] if name in vars(base)), None)
            if definer is None or not _is_upstream(definer.__module__):
                continue
            qualified = f"{definer.__module__}.{definer.__qualname__}.{name}"
            dunder = name.startswith("__")
            if name.startswith("_") and not dunder:
                found.add((PRIVATE_OVERRIDE, qualified))
            elif (name == "__init__" or not dunder) and _replaces_openrlhf_code(definer, item):
                found.add((REPLACED_METHOD, qualified))
    return found


def _may_subclass_upstream(source: str) -> bool:
    """Whether the module defines a class with a base and imports an upstream package or the adapter
    (whose classes derive from upstream ones): the modules :func:`overrides` looks into."""
    tree = ast.parse(source)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    reaches = any(_is_upstream(name) or name.startswith("infoppo_cli.openrlhf_adapter") for name in imported)
    return reaches and any(isinstance(node, ast.ClassDef) and node.bases for node in tree.body)


@cache
def replacements(path: Path) -> set[tuple[str, str]]:
    """Everything :func:`rebindings` and :func:`overrides` find in one module of the package."""
    source = path.read_text(encoding="utf-8")
    found = rebindings(source)
    if _may_subclass_upstream(source):
        parts = ("infoppo_cli", *path.relative_to(PACKAGE).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found |= overrides(importlib.import_module(name), source)
    return found


def listed(kind: str, target: str, module: str) -> bool:
    """Whether the table has a row for ``target`` that names ``module`` (relative to ``infoppo_cli/``)."""
    if kind == NESTED:
        return False
    if kind == STAND_IN_MODULE:
        return any(p.kind == STAND_IN_MODULE and module in p.where for p in PATCHES)
    return lists(target, module, None if kind == REBINDING else kind)


def unlisted(found: dict[str, set[tuple[str, str]]]) -> list[str]:
    """The findings (per module, relative to ``infoppo_cli/``) that no row of the table lists."""
    return sorted(
        f"{module}: {kind} {target}"
        for module, replaced in found.items()
        for kind, target in replaced
        if not listed(kind, target, module)
    )


def test_every_replacement_in_the_package_has_a_row():
    missing = unlisted({path.relative_to(PACKAGE).as_posix(): replacements(path) for path in SOURCES})
    assert not missing, "no row in openrlhf_adapter/patches.py for:\n" + "\n".join(missing)


SEEN_BY_THE_SCAN = {
    MODULE_ATTRIBUTE: REBINDING,
    CLASS_ATTRIBUTE: REBINDING,
    PRIVATE_OVERRIDE: PRIVATE_OVERRIDE,
    REPLACED_METHOD: REPLACED_METHOD,
}
"""The row kinds whose every name the scan finds (an instance row may name a plain attribute, such as
``experience_maker``, which only a method name would reveal)."""


def test_every_row_is_made_where_it_says():
    found = {
        (path.relative_to(PACKAGE).as_posix(), kind, target)
        for path in SOURCES
        for kind, target in replacements(path)
    }
    stale = [
        f"{module}: {name}"
        for patch in PATCHES
        if patch.kind in SEEN_BY_THE_SCAN
        for module in patch.where
        for name in patch.what
        if (module, SEEN_BY_THE_SCAN[patch.kind], name) not in found
    ]
    stale += [
        f"{module}: sys.modules"
        for patch in PATCHES
        if patch.kind == STAND_IN_MODULE
        for module in patch.where
        if (module, STAND_IN_MODULE, "sys.modules") not in found
    ]
    assert not stale, "rows that their modules do not make:\n" + "\n".join(stale)


def test_every_row_is_complete():
    assert all(patch.kind in KINDS for patch in PATCHES)
    assert all(patch.what and patch.where and patch.why and patch.pinned_by for patch in PATCHES)
    assert all((PACKAGE / module).is_file() for patch in PATCHES for module in patch.where)
    replaced = [name for patch in PATCHES if patch.kind != STAND_IN_MODULE for name in patch.what]
    assert all(_is_upstream(name) for name in replaced)
    assert any(patch.kind == INSTANCE_ATTRIBUTE for patch in PATCHES)  # wrapped instance methods too


PLANTED = """
import torch
import openrlhf.utils as u
from openrlhf.trainer.ppo_utils import experience
from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker
from openrlhf.trainer.ray.ppo_actor import PolicyModelActor

Upstream = PolicyModelActor.__ray_actor_class__


def plant(generator, name):  # never called: importing the module changes nothing upstream
    u.get_strategy = None
    torch.cuda.mem_get_info = None
    cls = experience.Experience
    setattr(cls, "extra", None)
    Upstream.fit = None
    generator.generate_eval_samples = None
    delattr(cls, name)

    class Nested(RemoteExperienceMaker):
        pass


class Maker(RemoteExperienceMaker):
    def _flatten_results(self, refs, duplicate_factor):
        return []

    def make_experience(self, samples_list):
        return []

    def make_experience_batch(self, rollout_samples):
        return super().make_experience_batch(rollout_samples)

    def _own_helper(self):
        return None
"""


@pytest.fixture
def planted(tmp_path):
    """The module :data:`PLANTED`, imported from a file."""
    path = tmp_path / "planted.py"
    path.write_text(PLANTED, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("infoppo_planted_rebindings", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_the_scan_sees_each_kind_of_replacement(planted):
    maker = "openrlhf.trainer.ppo_utils.experience_maker.RemoteExperienceMaker"
    assert rebindings(PLANTED) | overrides(planted, PLANTED) == {
        (REBINDING, "openrlhf.utils.get_strategy"),
        (REBINDING, "torch.cuda.mem_get_info"),
        (REBINDING, "openrlhf.trainer.ppo_utils.experience.Experience.extra"),
        (REBINDING, "openrlhf.trainer.ppo_utils.experience.Experience.*"),
        (REBINDING, "openrlhf.trainer.ray.ppo_actor.PolicyModelActor.fit"),
        (INSTANCE_ATTRIBUTE, ".generate_eval_samples"),
        (NESTED, "Nested"),
        (PRIVATE_OVERRIDE, f"{maker}._flatten_results"),
        (REPLACED_METHOD, f"{maker}.make_experience"),
    }


def test_a_planted_replacement_fails_the_table_check(planted):
    found = rebindings(PLANTED) | overrides(planted, PLANTED)
    assert len(unlisted({"openrlhf_adapter/planted.py": found})) == len(found)  # a module without rows
    # in the place of a module of the package, only what that module's rows list passes
    as_maker = unlisted({"openrlhf_adapter/experience_maker.py": found})
    assert len(as_maker) == len(found) - 1 and not [line for line in as_maker if "_flatten_results" in line]
    as_fields = unlisted({"openrlhf_adapter/experience_fields.py": found})
    assert len(as_fields) == len(found) - 2 and not [line for line in as_fields if ".Experience." in line]
    as_device = unlisted({"openrlhf_adapter/cpu/torch_device.py": found})
    assert "openrlhf_adapter/cpu/torch_device.py: rebinding torch.cuda.mem_get_info" in as_device
    assert listed(REBINDING, "torch.cuda.set_device", "openrlhf_adapter/cpu/torch_device.py")
