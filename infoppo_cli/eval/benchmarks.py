"""Loading a benchmark: from the Hugging Face Hub by default, or from a local file (``NAME=FILE``) whose
columns are auto-detected. Either way the result is a list of :class:`Problem` with normalised gold
answers, so that evaluation, training-time eval and reports all see the same problems and answers.
Which benchmarks exist and how a selection is written: :mod:`infoppo_cli.eval.registry`.
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.data import hub
from infoppo_cli.data.rows import Bad, is_verl_row, prompt_text, raw_problem, row_cells
from infoppo_cli.data.templates import extract_dapo_problem
from infoppo_cli.errors import UsageError
from infoppo_cli.eval.registry import (  # re-exported: the names every command imports from here
    BENCH_NAMES,
    DEFAULT_BENCHES,
    LOCAL_SUFFIXES,
    BenchSpec,
    bench_names,
    bench_spec,
    load_registry,
    parse_selection,
    selection_text,
    spec_for,
)
from infoppo_cli.grading.normalise import normalise_gold
from infoppo_cli.records import iter_jsonl
from infoppo_cli.records.text import loads, valid_text

__all__ = [
    "BENCH_NAMES",
    "DEFAULT_BENCHES",
    "BenchSpec",
    "Problem",
    "bench_names",
    "bench_spec",
    "describe_bench",
    "load_bench",
    "load_registry",
    "parse_selection",
    "read_records",
    "selection_text",
]

log = logging.getLogger(__name__)

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


def describe_bench(name: str, benches_file: str | Path | None = None) -> dict[str, Any]:
    """What a report needs to name a benchmark: ``title``, ``source`` (Hub id or citation), ``size``,
    ``license``; a name the registry (with ``benches_file``) does not know gets its name as title."""
    registry = load_registry(benches_file)
    spec = registry.get(name)
    if spec is None:
        return {"name": name, "title": name, "source": None, "size": None, "license": None}
    source = spec.source or (f"https://huggingface.co/datasets/{spec.hf_id}" if spec.hf_id else None)
    return {"name": name, "title": spec.title, "source": source, "size": spec.size, "license": spec.license}


# --- loading ------------------------------------------------------------------------------------------


def load_bench(
    name: str, data_file: str | Path | None = None, benches_file: str | Path | None = None
) -> list[Problem]:
    """Load benchmark ``name`` from the Hugging Face Hub, or from ``data_file`` (jsonl/parquet/csv/json).

    ``name`` is a registry benchmark (with ``benches_file``'s entries), or any name when ``data_file`` is
    given. Gold answers go through :func:`~infoppo_cli.grading.normalise.normalise_gold`; repeated
    problems (DAPO's AIME file repeats each 32×) are kept once. An empty problem or answer raises
    :class:`UsageError`; a problem count other than the registry's prints a loud warning, since the
    scores are then not comparable.
    """
    spec = spec_for(name, data_file, benches_file)
    if data_file is None and spec.task:
        data_file = _task_heldout(spec.task)
    if data_file is None:
        origin = f"{spec.hf_id} ({spec.split})"
        rows = _rows_from_hub(spec)
    else:
        origin = str(data_file)
        rows = read_records(Path(data_file))
    problems = _rows_to_problems(spec, rows, origin)
    if spec.size is not None and len(problems) != spec.size:
        log.warning(
            f"{name}: expected {spec.size} problems but found {len(problems)} in {origin}; "
            "scores will not be comparable with published numbers"
        )
    return problems


def _task_heldout(task: str) -> Path:
    """The held-out file of a built-in task (built offline and cached on first use)."""
    from infoppo_cli.tasks import ensure_task  # lazy: tasks/ off start-up
    from infoppo_cli.tasks.recipes import task_recipe  # lazy: tasks/ off start-up

    return ensure_task(task_recipe(task)).heldout_file


def _rows_from_hub(spec: BenchSpec) -> list[dict[str, Any]]:
    import datasets  # lazy: heavy, kept off start-up

    hub.hub_unavailable()  # without network: the cache only, at once (no retries)
    rows: list[dict[str, Any]] = []
    for config in spec.configs or (None,):
        shown = spec.hf_id + (f" [{config}]" if config else "")
        try:
            dataset = datasets.load_dataset(spec.hf_id, config, split=spec.split, revision=spec.revision)
        except Exception as exc:  # no network, no such dataset, auth: all need the same advice
            how = f"give a downloaded copy as {spec.name}=FILE (one of {', '.join(LOCAL_SUFFIXES)})"
            raise hub.hub_error(f"{spec.name} ({shown})", exc, how) from None
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
            import pyarrow.parquet as pq  # lazy: heavy, kept off start-up

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
        data = loads(path.read_text(encoding="utf-8"))
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
        answer = valid_text(normalise_gold(row.get(answer_col)))
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
        problem_id = valid_text(_row_id(row, id_col, position, multi_config=len(spec.configs) > 1))
        text = valid_text(extract_dapo_problem(problem) or problem.strip())
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
        return normalise_gold(row[id_col])
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
    """verl/DAPO files (e.g. BytedTsinghua-SIA/AIME-2024): a message-list ``prompt`` and ``reward_model``."""
    return is_verl_row(columns) and spec.problem_column not in columns


def _flatten_dapo_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A verl row's problem (its raw problem, else its prompt's text without DAPO's template), answer
    and id."""
    prompt, answer, index = row_cells(row)
    text = prompt_text(prompt)
    text = None if isinstance(text, Bad) else text
    problem = raw_problem(row) or (extract_dapo_problem(text) if text else None)
    return {"problem": problem or text, "answer": None if isinstance(answer, Bad) else answer, "id": index}
