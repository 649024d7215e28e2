"""The benchmark registry (``evaluation/benchmarks.toml``) and the loader every command shares.

A benchmark is loaded from the Hugging Face Hub by default, or from a local file (``--data-file``) whose
columns are auto-detected. Either way the result is a list of :class:`Problem` with normalised gold
answers, so that evaluation, training-time eval and reports all see the same problems and answers.
"""

from __future__ import annotations

import csv
import functools
import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.atomic import iter_jsonl
from infoppo_cli.data.templates import extract_dapo_problem
from infoppo_cli.errors import UsageError
from infoppo_cli.resources import data_dir

log = logging.getLogger(__name__)

BENCH_NAMES: tuple[str, ...] = ("amc23", "aime24", "aime25", "aime26", "beyondaime")
"""Every benchmark in the registry, in report order."""

LOCAL_SUFFIXES = (".jsonl", ".parquet", ".csv", ".json")

# Column names tried, in order and case-insensitively, when a file lacks the registry's own columns.
PROBLEM_COLUMNS = ("problem", "question", "prompt", "input")
ANSWER_COLUMNS = ("answer", "expected_answer", "ground_truth", "label", "gold")
ID_COLUMNS = ("id", "problem_idx", "problem_id", "idx", "uid")


@dataclass(frozen=True)
class Problem:
    """One benchmark problem with its normalised gold answer."""

    bench: str
    id: str
    problem: str
    answer: str


@dataclass(frozen=True)
class BenchSpec:
    """Where a benchmark lives and how to read it (one table of ``benchmarks.toml``)."""

    name: str
    title: str
    hf_id: str
    configs: tuple[str, ...]
    split: str
    revision: str | None
    problem_column: str
    answer_column: str
    id_column: str | None
    size: int
    license: str
    answer_format: str
    notes: str

    @property
    def config(self) -> str | None:
        """The Hub config(s) as one string (``None`` when the dataset has a single default config)."""
        return ",".join(self.configs) or None


def registry_path() -> Path:
    """The registry file, ``evaluation/benchmarks.toml``."""
    return data_dir("evaluation") / "benchmarks.toml"


@functools.lru_cache(maxsize=1)
def load_registry() -> dict[str, BenchSpec]:
    """Read every :class:`BenchSpec` from the registry file, in :data:`BENCH_NAMES` order."""
    import tomllib

    path = registry_path()
    with path.open("rb") as handle:
        tables = tomllib.load(handle)
    if sorted(tables) != sorted(BENCH_NAMES):
        expected, found = ", ".join(BENCH_NAMES), ", ".join(tables)
        raise UsageError(f"{path} must define exactly {expected}; it defines {found}")
    return {name: _spec_from_table(name, tables[name], path) for name in BENCH_NAMES}


def _spec_from_table(name: str, table: Mapping[str, Any], path: Path) -> BenchSpec:
    try:
        return BenchSpec(
            name=name,
            title=str(table["title"]),
            hf_id=str(table["hf_id"]),
            configs=tuple(str(c) for c in table.get("configs", [])),
            split=str(table["split"]),
            revision=str(table.get("revision", "")) or None,
            problem_column=str(table["problem_column"]),
            answer_column=str(table["answer_column"]),
            id_column=str(table.get("id_column", "")) or None,
            size=int(table["size"]),
            license=str(table["license"]),
            answer_format=str(table.get("answer_format", "")),
            notes=" ".join(str(table.get("notes", "")).split()),
        )
    except KeyError as exc:
        raise UsageError(f"{path}: [{name}] lacks the key {exc.args[0]!r}") from None


def bench_spec(name: str) -> BenchSpec:
    """The registry entry for ``name``; an unknown name raises :class:`UsageError` listing the valid ones."""
    registry = load_registry()
    if name not in registry:
        raise UsageError(f"unknown benchmark {name!r}; choose from: {', '.join(BENCH_NAMES)} (or 'all')")
    return registry[name]


def resolve_bench_names(selection: str) -> list[str]:
    """Turn ``"all"`` or a comma-separated list such as ``"aime24,aime25"`` into checked bench names."""
    parts = [part.strip() for part in selection.split(",") if part.strip()]
    if parts == ["all"]:
        return list(BENCH_NAMES)
    if not parts:
        raise UsageError(f"no benchmark given; choose from: {', '.join(BENCH_NAMES)} (or 'all')")
    names = [bench_spec(part).name for part in parts]
    return list(dict.fromkeys(names))


# --- gold answers -------------------------------------------------------------------------------------

_WRAPPERS = (
    re.compile(r"^\$+(.*?)\$+$", re.S),
    re.compile(r"^\\\((.*)\\\)$", re.S),
    re.compile(r"^\\\[(.*)\\\]$", re.S),
    re.compile(r"^\\boxed\{(.*)\}$", re.S),
)
_DEGREES = re.compile(r"\s*(\^\s*\{?\s*\\circ\s*\}?|°|\\degree)\s*$")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+")
_INTEGER_VALUED_DECIMAL = re.compile(r"([+-]?\d+)\.0*")
_INTEGER = re.compile(r"[+-]?\d+")


def normalize_gold(answer: object) -> str:
    """A gold answer as a canonical string: ``27.0`` → ``27``, ``025`` → ``25``, ``336^\\circ`` → ``336``.

    Numbers become integers when they are integer-valued; ``$…$``, ``\\boxed{…}``, degree marks and
    thousands separators are removed. Anything else (``\\frac{109}{33}``, ``2.5``) is kept as written,
    for math-verify to compare. ``None`` becomes ``""``.
    """
    if answer is None:
        return ""
    if hasattr(answer, "item") and not isinstance(answer, (str, bytes)):
        answer = answer.item()  # numpy / pyarrow scalars
    if isinstance(answer, bool):
        return str(answer)
    if isinstance(answer, int):
        return str(answer)
    if isinstance(answer, float):
        if math.isfinite(answer) and answer.is_integer():
            return str(int(answer))
        return repr(answer)
    text = str(answer).strip()
    for _ in range(8):  # peel nested wrappers until nothing changes
        before = text
        text = _normalize_text_once(text)
        if text == before:
            break
    return text


def _normalize_text_once(text: str) -> str:
    for wrapper in _WRAPPERS:
        match = wrapper.fullmatch(text)
        if match:
            text = match.group(1).strip()
    text = _DEGREES.sub("", text).strip()
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    match = _INTEGER_VALUED_DECIMAL.fullmatch(text)
    if match:
        text = match.group(1)
    if _INTEGER.fullmatch(text):
        text = str(int(text))
    return text


# --- loading ------------------------------------------------------------------------------------------


def load_bench(name: str, data_file: str | Path | None = None) -> list[Problem]:
    """Load benchmark ``name`` from the Hugging Face Hub, or from ``data_file`` (jsonl/parquet/csv/json).

    Gold answers go through :func:`normalize_gold`; repeated problems (DAPO's AIME file repeats each
    32×) are kept once. An empty problem or answer raises :class:`UsageError`; a problem count other
    than the registry's prints a loud warning, since the scores are then not comparable.
    """
    spec = bench_spec(name)
    if data_file is None:
        origin = f"{spec.hf_id} ({spec.split})"
        rows = _rows_from_hub(spec)
    else:
        origin = str(data_file)
        rows = read_records(Path(data_file))
    problems = _rows_to_problems(spec, rows, origin)
    if len(problems) != spec.size:
        log.warning(
            f"{name}: expected {spec.size} problems but found {len(problems)} in {origin}; "
            "scores will not be comparable with published numbers"
        )
    return problems


def _rows_from_hub(spec: BenchSpec) -> list[dict[str, Any]]:
    import datasets

    rows: list[dict[str, Any]] = []
    for config in spec.configs or (None,):
        shown = spec.hf_id + (f" [{config}]" if config else "")
        try:
            dataset = datasets.load_dataset(spec.hf_id, config, split=spec.split, revision=spec.revision)
        except Exception as exc:  # no network, no such dataset, auth: all need the same advice
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(
                f"could not load {spec.name} from the Hugging Face Hub ({shown}: {reason}); "
                f"download it and pass --data-file PATH (one of {', '.join(LOCAL_SUFFIXES)})"
            ) from None
        part = dataset.to_list()
        for position, row in enumerate(part, start=1):
            row.setdefault("_config", config)
            row.setdefault("_position", position)
        rows.extend(part)
    return rows


def read_records(path: Path) -> list[dict[str, Any]]:
    """Read a small table file (jsonl, parquet, csv or json) into a list of row dicts."""
    suffix = path.suffix.lower()
    if suffix not in LOCAL_SUFFIXES:
        choices = ", ".join(LOCAL_SUFFIXES)
        raise UsageError(f"{path}: unsupported file type {suffix or '(none)'}; use one of {choices}")
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    try:
        if suffix == ".jsonl":
            rows = _read_jsonl(path)
        elif suffix == ".json":
            rows = _read_json(path)
        elif suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        else:
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"{path}: cannot read {suffix[1:]} ({exc})") from None
    if not rows:
        raise UsageError(f"{path}: the file holds no rows")
    return rows


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in iter_jsonl(path):
        if line.record is None:
            raise UsageError(f"{path}:{line.number}: {line.error}")
        rows.append(line.record)
    return rows


def _read_json(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict):
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) == 1:  # {"data": [...]} style
            data = lists[0]
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        raise UsageError(f"{path}: expected a JSON list of objects (or one key holding such a list)")
    return data


def _find_column(columns: Iterable[str], preferred: str | None, candidates: tuple[str, ...]) -> str | None:
    by_lower = {column.lower(): column for column in columns}
    for name in ((preferred,) if preferred else ()) + candidates:
        if name.lower() in by_lower:
            return by_lower[name.lower()]
    return None


def _rows_to_problems(spec: BenchSpec, rows: list[dict[str, Any]], origin: str) -> list[Problem]:
    columns = _union_of_keys(rows)
    if _is_dapo_layout(columns, spec):
        rows = [_flatten_dapo_row(row) for row in rows]
        columns = _union_of_keys(rows)
    problem_col = _find_column(columns, spec.problem_column, PROBLEM_COLUMNS)
    answer_col = _find_column(columns, spec.answer_column, ANSWER_COLUMNS)
    if problem_col is None or answer_col is None:
        missing = "problem/question" if problem_col is None else "answer"
        raise UsageError(f"{origin}: no {missing} column found; columns are {', '.join(columns)}")
    id_col = _find_column(columns, spec.id_column, ID_COLUMNS)

    problems: dict[str, Problem] = {}
    duplicates = 0
    for position, row in enumerate(rows, start=1):
        problem = row.get(problem_col)
        if not isinstance(problem, str) or not problem.strip():
            raise UsageError(f"{origin}: row {position} of {spec.name} has an empty or missing problem")
        answer = normalize_gold(row.get(answer_col))
        if not answer:
            raise UsageError(f"{origin}: row {position} of {spec.name} has an empty or missing answer")
        key = " ".join(problem.split())
        if key in problems:
            duplicates += 1
            if problems[key].answer != answer:
                log.warning(
                    f"{spec.name}: row {position} repeats a problem with a different answer ({answer!r})"
                )
            continue
        problem_id = _row_id(row, id_col, position, multi_config=len(spec.configs) > 1)
        text = extract_dapo_problem(problem) or problem.strip()
        problems[key] = Problem(bench=spec.name, id=problem_id, problem=text, answer=answer)
    if duplicates:
        log.info("%s: %d repeated problem rows in %s were kept once", spec.name, duplicates, origin)
    _check_unique_ids(spec.name, problems.values(), origin)
    return list(problems.values())


def _union_of_keys(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for row in rows for key in row))


def _row_id(row: Mapping[str, Any], id_col: str | None, position: int, multi_config: bool) -> str:
    """The id column's value, else the row's position (within its config, for multi-config sets)."""
    if id_col is not None and row.get(id_col) not in (None, ""):
        return normalize_gold(row[id_col])
    if multi_config and row.get("_config"):
        return f"{row['_config']}-{row.get('_position', position)}"
    return str(position)


def _check_unique_ids(name: str, problems: Iterable[Problem], origin: str) -> None:
    seen: set[str] = set()
    for problem in problems:
        if problem.id in seen:
            raise UsageError(f"{origin}: {name} has two different problems with id {problem.id!r}")
        seen.add(problem.id)


def _is_dapo_layout(columns: list[str], spec: BenchSpec) -> bool:
    """DAPO/verl files (e.g. BytedTsinghua-SIA/AIME-2024): a message-list ``prompt`` and ``reward_model``."""
    return "reward_model" in columns and "prompt" in columns and spec.problem_column not in columns


def _flatten_dapo_row(row: Mapping[str, Any]) -> dict[str, Any]:
    extra = row.get("extra_info") or {}
    prompt = row.get("prompt")
    text = prompt[-1].get("content") if isinstance(prompt, list) and prompt else prompt
    problem = extra.get("raw_problem") or (extract_dapo_problem(text) if isinstance(text, str) else None)
    reward_model = row.get("reward_model") or {}
    return {
        "problem": problem or text,
        "answer": reward_model.get("ground_truth"),
        "id": extra.get("index"),
    }
