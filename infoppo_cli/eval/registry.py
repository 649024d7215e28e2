"""The benchmark registry and the benchmark selection syntax every command shares.

The registry is ``evaluation/benchmarks.toml`` (shipped) plus, optionally, a user file in the same
format (``--benches-file FILE.toml``), whose tables are checked exactly as the shipped ones are. Both are
read by the rules of every input file: a UTF-8 byte-order mark is read past (as the JSONL readers of
``data prep``, ``eval --bench`` and ``grade --file`` do), a file nested too deeply for the parser is
malformed, and a table naming an unknown built-in ``task`` is refused with the known ones, all as one
:class:`UsageError` line. A
selection (``eval --bench``, ``train --eval-bench``) is a comma-separated list whose items are registry
names, ``all``, or ``NAME=FILE``: a local jsonl/parquet/csv/json file, either replacing the Hub data of
a registry benchmark or, under a new name, a benchmark of its own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.resources import data_dir
from infoppo_cli.schema import checked, file_problem, read_toml

BENCH_NAMES: tuple[str, ...] = (
    "amc23",
    "aime24",
    "aime25",
    "aime26",
    "beyondaime",
    "math500",
    "arithmetic",
    "chain",
    "chain-shortcut",
)
"""Every benchmark of the shipped registry, in report order."""

DEFAULT_BENCHES: tuple[str, ...] = ("amc23", "aime24", "aime25", "aime26", "beyondaime")
"""What ``infoppo eval`` evaluates when no ``--bench`` is given: the competition benchmarks, whose
unweighted mean is the results table's Average row. MATH-500 is evaluated when asked for (or ``all``)."""

ALL = "all"
NONE_WORDS = ("none", "off")
"""A selection of no benchmark (``--eval-bench none``: in-training evaluation off)."""
RESERVED_NAMES = (ALL, *NONE_WORDS)
"""Words of the selection syntax itself (``train --eval-bench none`` switches evaluation off)."""
LOCAL_SUFFIXES = (".jsonl", ".parquet", ".csv", ".json")
NAME_RULE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
"""A benchmark name: it becomes part of file names (``details_<name>.parquet``) and metric keys."""


@dataclass(frozen=True)
class BenchSpec:
    """Where a benchmark lives and how to read it: one table of a registry file, or a local file given
    as ``NAME=FILE`` under a new name (then ``hf_id`` is empty and ``size`` unknown)."""

    name: str
    title: str
    hf_id: str
    configs: tuple[str, ...]
    split: str
    revision: str | None
    problem_column: str
    answer_column: str
    id_column: str | None
    size: int | None
    license: str
    answer_format: str = ""
    notes: str = ""
    source: str = ""
    task: str = ""
    """A built-in task whose held-out problems are this benchmark (``infoppo_cli/tasks``)."""

    @property
    def config(self) -> str | None:
        """The Hub config(s) as one string (``None`` when the dataset has a single default config)."""
        return ",".join(self.configs) or None

    @property
    def on_hub(self) -> bool:
        return bool(self.hf_id)


def registry_path() -> Path:
    """The shipped registry file, ``evaluation/benchmarks.toml``."""
    return data_dir("evaluation") / "benchmarks.toml"


def spec_from_table(name: str, table: Any, where: str) -> BenchSpec:
    """Check one registry table (:class:`BenchTable`; ``where`` names its file) and build it."""
    from infoppo_cli.eval.bench_table import BenchTable  # lazy: pydantic, kept off start-up

    if not NAME_RULE.fullmatch(name):
        raise file_problem(where, (name,), f"is no benchmark name: {_NAME_ADVICE}")
    checked_table = checked(BenchTable, table, where, (name,))
    if checked_table.task:
        from infoppo_cli.tasks.recipes import TASK_RECIPES  # lazy: tasks/ off start-up

        if checked_table.task not in TASK_RECIPES:
            known = ", ".join(TASK_RECIPES)
            problem = f"is no built-in task (known: {known})"
            raise file_problem(where, (name, "task"), problem, checked_table.task)
    return BenchSpec(
        name=name,
        title=checked_table.title,
        hf_id=checked_table.hf_id,
        configs=tuple(checked_table.configs),
        split=checked_table.split,
        revision=checked_table.revision or None,
        problem_column=checked_table.problem_column,
        answer_column=checked_table.answer_column,
        id_column=checked_table.id_column or None,
        size=checked_table.size,
        license=checked_table.license,
        answer_format=checked_table.answer_format,
        notes=" ".join(checked_table.notes.split()),
        source=checked_table.source,
        task=checked_table.task,
    )


_NAME_ADVICE = (
    "a benchmark name is lowercase letters, digits, '.', '_' or '-' (at most 64, first a letter or digit)"
)


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, BenchSpec]:
    path = registry_path()
    tables = read_toml(path, "")
    if sorted(tables) != sorted(BENCH_NAMES):
        expected, found = ", ".join(BENCH_NAMES), ", ".join(tables)
        raise UsageError(f"{path} must define exactly {expected}; it defines {found}")
    return {name: spec_from_table(name, tables[name], str(path)) for name in BENCH_NAMES}


@functools.lru_cache(maxsize=8)
def _user_benches(path: Path, stamp: tuple[int, int]) -> dict[str, BenchSpec]:
    tables = read_toml(path, "--benches-file")
    where = f"--benches-file {path}"
    if not tables:
        raise UsageError(f"{where} defines no benchmark; add a [NAME] table per benchmark")
    shipped = [name for name in tables if name in BENCH_NAMES or name in RESERVED_NAMES]
    if shipped:
        raise file_problem(where, (shipped[0],), "is a shipped benchmark or a reserved word; rename it")
    return {name: spec_from_table(name, table, where) for name, table in tables.items()}


def load_registry(benches_file: str | Path | None = None) -> dict[str, BenchSpec]:
    """The shipped benchmarks (in :data:`BENCH_NAMES` order), then those of ``benches_file``."""
    registry = dict(_shipped())
    if benches_file is not None:
        path = Path(benches_file).expanduser().resolve()
        try:
            info = path.stat()
            stamp = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = (0, 0)
        registry.update(_user_benches(path, stamp))
    return registry


def bench_names(benches_file: str | Path | None = None) -> tuple[str, ...]:
    """Every benchmark name the registry knows (with ``benches_file``'s), in report order."""
    return tuple(load_registry(benches_file))


def _choices(benches_file: str | Path | None) -> str:
    return (
        f"choose from: {', '.join(load_registry(benches_file))} (or 'all'), or give a local file as NAME=FILE"
    )


def bench_spec(name: str, benches_file: str | Path | None = None) -> BenchSpec:
    """The registry entry for ``name``; an unknown name raises :class:`UsageError` listing the valid ones."""
    registry = load_registry(benches_file)
    if name not in registry:
        raise UsageError(f"unknown benchmark {name!r}; {_choices(benches_file)}")
    return registry[name]


def local_spec(name: str, file: str | Path) -> BenchSpec:
    """The spec of a benchmark known only as ``NAME=FILE`` (columns are auto-detected, size unknown)."""
    return BenchSpec(
        name=name,
        title=f"local file {Path(file).name}",
        hf_id="",
        configs=(),
        split="",
        revision=None,
        problem_column="problem",
        answer_column="answer",
        id_column=None,
        size=None,
        license="(local file)",
        source=str(file),
    )


def spec_for(name: str, file: str | Path | None, benches_file: str | Path | None = None) -> BenchSpec:
    """The spec ``load_bench`` reads ``name`` with: its registry entry, else (given a file) a local one."""
    if file is not None and name not in load_registry(benches_file):
        return local_spec(name, file)
    return bench_spec(name, benches_file)


def parse_selection(
    text: str, benches_file: str | Path | None = None, option: str = "--bench"
) -> dict[str, str | None]:
    """``"aime24,mine=probs.jsonl"``, ``"all"`` or ``"none"`` as ``{name: absolute file, or None for the
    Hub}`` (``none``: empty). The one parser of every option that names benchmarks (``eval --bench``,
    ``train --eval-bench``, ``sweep --final-eval-bench``), so each takes the same forms.

    A registry name given with ``=FILE`` keeps its registry entry (columns, expected size) but reads the
    file instead of the Hub; a new name with ``=FILE`` is a benchmark of its own. Unknown names, missing
    or unsupported files, one name given twice with different files and ``none`` among names are a
    :class:`UsageError`.
    """
    if text.strip().lower() in NONE_WORDS:
        return {}
    registry = load_registry(benches_file)
    chosen: dict[str, str | None] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, has_file, file = (piece.strip() for piece in item.partition("="))
        name = name.lower()
        if name in NONE_WORDS and not has_file:
            raise UsageError(f"{option} {text}: '{name}' selects no benchmark, so it stands alone")
        if name == ALL and not has_file:  # the math benchmarks (a built-in task's set is asked for by name)
            for known, spec in registry.items():
                if not spec.task:
                    chosen.setdefault(known, None)
            continue
        if not has_file:
            chosen[bench_spec(name, benches_file).name] = chosen.get(name)
            continue
        path = _checked_file(name, file, option)
        if chosen.get(name) not in (None, path):
            raise UsageError(f"{option}: {name} is given twice, with different files")
        chosen[name] = path
    if not chosen:
        raise UsageError(f"no benchmark given; {_choices(benches_file)}")
    return chosen


def _checked_file(name: str, file: str, option: str) -> str:
    shown = f"{option} {name}={file}"
    if not name:
        raise UsageError(f"{option} ={file}: give the benchmark's name before '=' (NAME=FILE)")
    if not NAME_RULE.fullmatch(name):
        raise UsageError(f"{shown}: {_NAME_ADVICE}")
    if name in RESERVED_NAMES:
        raise UsageError(f"{shown}: {name!r} is a word of the selection syntax; name the benchmark otherwise")
    if not file:
        raise UsageError(f"{shown}: give a file after '=' (NAME=FILE)")
    path = Path(file).expanduser()
    if path.suffix.lower() not in LOCAL_SUFFIXES:
        suffix = path.suffix or "(none)"
        raise UsageError(f"{shown}: unsupported file type {suffix}; use one of {', '.join(LOCAL_SUFFIXES)}")
    if not path.is_file():
        raise UsageError(f"{shown}: no such file" if not path.exists() else f"{shown} is not a file")
    return str(path.resolve())


def selection_text(chosen: dict[str, str | None]) -> str:
    """A parsed selection written back as the option's text (``aime24,mine=/abs/probs.jsonl``;
    ``none`` when empty), which :func:`parse_selection` reads back to the same selection."""
    items = [name if file is None else f"{name}={file}" for name, file in chosen.items()]
    return ",".join(items) or NONE_WORDS[0]
