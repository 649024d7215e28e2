"""The responses to inspect: an ``infoppo eval`` ``samples.jsonl`` or any JSONL with ``prompt`` and
``response`` (and optionally ``id``, and ``correct`` or a ``gold`` answer to grade the response by).

An eval ``samples.jsonl`` stores no prompt text, only ``bench`` and ``id``: the problems are read back
from the benchmark the evaluation used (``eval_config.json`` beside the file names its local files).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError
from infoppo_cli.eval.outdir import load_saved_bench
from infoppo_cli.eval.settings import CONFIG_FILE, read_config
from infoppo_cli.grading import grade_many
from infoppo_cli.records import iter_jsonl
from infoppo_cli.records.text import valid_text


@dataclass(frozen=True)
class Item:
    """One response to inspect: ``prompt`` is the raw problem text (the template is applied later)."""

    id: str
    prompt: str
    response: str
    correct: bool | None = None


def read_items(path: str | Path, max_responses: int | None = None) -> list[Item]:
    """Every row of ``path`` as an :class:`Item`, in file order (the first ``max_responses`` only).

    A missing, empty or malformed file, or a row without a text ``response``, is a :class:`UsageError`.
    """
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"--responses {path}: no such file")
    rows = []
    lines = iter_jsonl(path)
    while max_responses is None or len(rows) < max_responses:
        line = next(lines, None)
        if line is None:
            break
        if line.record is None:
            raise UsageError(f"{path}, line {line.number}: {line.error}")
        rows.append((line.number, line.record))
    if not rows:
        raise UsageError(f"{path} has no responses (the file is empty)")
    problems = _eval_problems(path, rows) if any("prompt" not in row for _, row in rows) else {}
    items = [_item(path, number, row, problems) for number, row in rows]
    _check_unique(path, items)
    return _graded(items, [row for _, row in rows])


def _graded(items: list[Item], rows: list[dict[str, Any]]) -> list[Item]:
    """Items whose row has no ``correct`` but a ``gold`` answer, graded as training grades them."""
    ungraded = [
        index
        for index, (item, row) in enumerate(zip(items, rows, strict=True))
        if item.correct is None and isinstance(row.get("gold"), str | int | float)
    ]
    if not ungraded:
        return items

    pairs = [(items[i].response, str(rows[i]["gold"])) for i in ungraded]
    graded = list(items)
    for index, verdict in zip(ungraded, grade_many(pairs), strict=True):
        graded[index] = replace(items[index], correct=verdict.correct)
    return graded


def _item(path: Path, number: int, row: dict[str, Any], problems: dict[tuple[str, str], str]) -> Item:
    where = f"{path}, line {number}"
    response = row.get("response")
    if not isinstance(response, str):
        raise UsageError(f"{where} has no text field 'response'")
    if "prompt" in row:
        prompt = row["prompt"]
        if not isinstance(prompt, str):
            raise UsageError(f"{where}: 'prompt' must be text")
        row_id = str(row.get("id", number))
    else:
        prompt = problems[(str(row["bench"]), str(row["id"]))]
        row_id = f"{row['bench']}/{row['id']}#{row.get('sample', 0)}"
    correct = row.get("correct")
    # a lone surrogate (JSON "\ud800") is repaired here: no tokenizer or UTF-8 writer accepts it
    verdict = correct if isinstance(correct, bool) else None
    return Item(valid_text(row_id), valid_text(prompt), valid_text(response), verdict)


def _check_unique(path: Path, items: list[Item]) -> None:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise UsageError(f"{path}: the id {item.id!r} occurs twice; ids must be unique")
        seen.add(item.id)


def _eval_problems(path: Path, rows: list[tuple[int, dict[str, Any]]]) -> dict[tuple[str, str], str]:
    """The problem texts of an eval ``samples.jsonl``, keyed by (bench, id)."""
    for number, row in rows:
        if "prompt" not in row and not {"bench", "id"} <= set(row):
            raise UsageError(
                f"{path}, line {number} has no 'prompt' (nor the 'bench' and 'id' of an infoppo eval sample)"
            )

    settings = _eval_settings(path)
    problems: dict[tuple[str, str], str] = {}
    for bench in sorted({str(row["bench"]) for _, row in rows if "prompt" not in row}):
        problems.update({(bench, p.id): p.problem for p in load_saved_bench(settings, bench)})
    missing = [
        (n, r) for n, r in rows if "prompt" not in r and (str(r["bench"]), str(r["id"])) not in problems
    ]
    if missing:
        number, row = missing[0]
        raise UsageError(f"{path}, line {number}: problem {row['id']!r} is not in benchmark {row['bench']!r}")
    return problems


def _eval_settings(path: Path) -> dict[str, Any]:
    """The settings of the ``infoppo eval`` run that wrote ``path`` (empty when there is none)."""
    try:
        config = read_config(Path(path).parent)
    except UsageError:
        raise UsageError(f"{Path(path).parent / CONFIG_FILE} is not an infoppo eval configuration") from None
    return config["settings"] if config is not None else {}


def eval_template(path: str | Path) -> str | None:
    """The prompt template of the ``infoppo eval`` run that wrote ``path``, if it was one."""
    return _eval_settings(Path(path)).get("template")
