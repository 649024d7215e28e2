"""DAPO-Math-17K → a clean OpenRLHF prompt file (``infoppo data prep dapo-math-17k``).

The published dataset holds 1,791,700 rows: about 17.4k distinct problems, each repeated ~100 times,
in verl's schema (``prompt`` = a one-message list, ``reward_model.ground_truth``, ``extra_info.index``).
Preparation streams the file in Arrow record batches, recovers each raw problem from DAPO's template,
keeps one row per problem (whitespace-normalised text), counts malformed rows and answer conflicts, and
writes JSONL rows ``{"id", "prompt", "label", "source", "lang", "problem"[, "source_index"]}``, where
``prompt`` is the problem in the chosen template and ``label`` the ground truth.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from infoppo_cli.atomic import atomic_write_text, atomic_writer
from infoppo_cli.errors import UsageError
from infoppo_cli.data.templates import DAPO_PREFIX, check_template, extract_dapo_problem, render_prompt

DATASETS = {"dapo-math-17k": "BytedTsinghua-SIA/DAPO-Math-17k"}
"""Dataset names ``data prep`` knows, with their Hugging Face ids."""

DEFAULT_OUT = Path("data/dapo-math-17k.jsonl")
LANGS = ("all", "en", "zh")
MALFORMED_REASONS = (
    "invalid JSON",
    "missing prompt",
    "empty prompt",
    "missing ground truth",
    "empty ground truth",
    "wrong type",
)
BATCH_ROWS = 65_536

PROMPT_COLUMNS = ("prompt", "problem", "question")
ANSWER_COLUMNS = ("label", "answer", "ground_truth", "solution")

# Han ideographs (CJK Unified, Extension A, Compatibility): what makes a DAPO prompt Chinese.
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_lang(text: str) -> str:
    """``"zh"`` if ``text`` contains a CJK ideograph, else ``"en"``."""
    return "zh" if _CJK.search(text) else "en"


def problem_key(problem: str) -> str:
    """The deduplication key: the problem with all whitespace runs collapsed to one space."""
    return " ".join(problem.split())


def problem_id(key: str) -> str:
    """A stable id for a problem, derived from its deduplication key."""
    return "dapo-" + hashlib.blake2b(key.encode("utf-8"), digest_size=6).hexdigest()


class _Bad:
    """A malformed cell, carrying the reason it is malformed."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


_MISSING_PROMPT, _EMPTY_PROMPT = _Bad("missing prompt"), _Bad("empty prompt")
_MISSING_ANSWER, _EMPTY_ANSWER = _Bad("missing ground truth"), _Bad("empty ground truth")
_WRONG_TYPE, _INVALID_JSON = _Bad("wrong type"), _Bad("invalid JSON")


def prompt_text(value: Any) -> str | _Bad:
    """The user text of a prompt cell: a string, or a chat message list (last user turn)."""
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list):
        if not value:
            return _MISSING_PROMPT
        users = [m for m in value if isinstance(m, dict) and m.get("role", "user") == "user"]
        if not users:
            return _WRONG_TYPE if not all(isinstance(m, dict) for m in value) else _MISSING_PROMPT
        value = users[-1].get("content")
    if value is None:
        return _MISSING_PROMPT
    if not isinstance(value, str):
        return _WRONG_TYPE
    return value if value.strip() else _EMPTY_PROMPT


def answer_text(value: Any) -> str | _Bad:
    """The ground truth of a row as a string (integers and integer-valued floats become digits)."""
    if value is None:
        return _MISSING_ANSWER
    if isinstance(value, str):
        value = value.strip()
        return value if value else _EMPTY_ANSWER
    if isinstance(value, bool):
        return _WRONG_TYPE
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    return _WRONG_TYPE


@dataclass
class Batch:
    """One slice of the source: parallel lists of prompt cells, answer cells and source indices."""

    prompts: list[Any]
    answers: list[Any]
    indices: list[Any] | None = None


@dataclass
class Source:
    """An opened source: a display name, the total row count (when known) and its batches."""

    name: str
    total: int | None
    batches: Iterator[Batch]


@dataclass
class PrepSummary:
    """What :func:`prepare_dapo` read, dropped and wrote."""

    source: str
    out: Path
    template: str
    lang: str
    rows_read: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    unique_problems: int = 0
    unique_source_indices: int | None = None
    conflicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    conflict_rows: int = 0
    untemplated: int = 0
    filtered_by_lang: int = 0
    written: int = 0
    langs: Counter[str] = field(default_factory=Counter)
    stopped_at_limit: bool = False
    conflicts_file: Path | None = None
    seconds: float = 0.0


# --- sources ------------------------------------------------------------------------------------------


def open_source(source: str | None, dataset: str = "dapo-math-17k") -> Source:
    """Open a Hugging Face dataset id or a local parquet/jsonl/json file for streaming."""
    if dataset not in DATASETS:
        raise UsageError(f"unknown dataset {dataset!r}; choose from: {', '.join(DATASETS)}")
    source = source or DATASETS[dataset]
    path = Path(source).expanduser()
    if path.is_file():
        return _open_local(path)
    if (
        path.suffix.lower() in (".parquet", ".jsonl", ".json")
        or path.is_dir()
        or not _looks_like_hub_id(source)
    ):
        raise UsageError(f"no such file: {source} (give a .parquet/.jsonl/.json file or a Hugging Face id)")
    return _open_hub(source)


def _looks_like_hub_id(source: str) -> bool:
    return re.fullmatch(r"[\w.-]+/[\w.-]+", source) is not None


def _open_local(path: Path) -> Source:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:
            raise UsageError(f"{path}: not a readable parquet file ({exc})") from None
        columns = _arrow_columns(parquet.schema_arrow.names, str(path))
        batches = parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns)
        return Source(str(path), parquet.metadata.num_rows, _arrow_batches(batches, columns, str(path)))
    if suffix in (".jsonl", ".json"):
        rows = _json_rows(path) if suffix == ".json" else None
        total = len(rows) if rows is not None else _count_lines(path)
        return Source(str(path), total, _python_batches(path, rows))
    raise UsageError(f"{path}: unsupported file type {suffix or '(none)'}; use .parquet, .jsonl or .json")


def _open_hub(hf_id: str) -> Source:
    import datasets

    try:
        dataset = datasets.load_dataset(hf_id, split="train")
    except Exception as exc:  # offline, unknown id, no access: the remedy is the same
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"could not load {hf_id} from the Hugging Face Hub ({reason}); download "
            "data/dapo-math-17k.parquet from it and pass --source path/to/dapo-math-17k.parquet"
        ) from None
    columns = _arrow_columns(dataset.column_names, hf_id)
    tables = dataset.select_columns(columns).with_format("arrow").iter(batch_size=BATCH_ROWS)
    record_batches = (batch for table in tables for batch in table.to_batches())
    return Source(hf_id, dataset.num_rows, _arrow_batches(record_batches, columns, hf_id))


def _arrow_columns(names: list[str], origin: str) -> list[str]:
    """[prompt column, answer column(, "extra_info")] of an Arrow source, or a UsageError."""
    prompt = next((n for n in PROMPT_COLUMNS if n in names), None)
    answer = (
        "reward_model" if "reward_model" in names else next((n for n in ANSWER_COLUMNS if n in names), None)
    )
    if prompt is None or answer is None:
        wanted = "prompt/problem/question column" if prompt is None else "reward_model or label/answer column"
        raise UsageError(f"{origin}: no {wanted}; columns are {', '.join(names)}")
    return [prompt, answer] + (["extra_info"] if "extra_info" in names else [])


def _arrow_batches(batches: Iterator[Any], columns: list[str], origin: str) -> Iterator[Batch]:
    import pyarrow as pa

    prompt, answer = columns[0], columns[1]
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as exc:  # a damaged page or a truncated download
            raise UsageError(f"{origin}: cannot read the data ({exc})") from None
        yield Batch(
            prompts=_arrow_prompts(batch.column(prompt)),
            answers=_arrow_answers(batch.column(answer), is_reward_model=answer == "reward_model"),
            indices=_arrow_indices(batch.column("extra_info")) if len(columns) > 2 else None,
        )


def _arrow_prompts(column: Any) -> list[Any]:
    """Prompt cells as Python values; a one-message list column is unpacked without building dicts."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        element = kind.value_type
        if pa.types.is_struct(element) and element.get_field_index("content") >= 0:
            lengths = pc.list_value_length(column)
            bounds = pc.min_max(lengths)
            if bounds["min"].as_py() == 1 and bounds["max"].as_py() == 1:
                first = pc.list_element(column, 0)
                roles_ok = element.get_field_index("role") < 0 or pc.all(
                    pc.equal(pc.struct_field(first, "role"), "user")
                ).as_py() in (True, None)
                if roles_ok:
                    content = pc.struct_field(first, "content")
                    # A null list must read as a missing prompt, not as a message with no content.
                    return pc.if_else(pc.is_null(column), pa.scalar(None, content.type), content).to_pylist()
    return column.to_pylist()


def _arrow_answers(column: Any, is_reward_model: bool) -> list[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if is_reward_model:
        if not pa.types.is_struct(column.type) or column.type.get_field_index("ground_truth") < 0:
            return [_WRONG_TYPE] * len(column)
        ground_truth = pc.struct_field(column, "ground_truth")
        column = pc.if_else(pc.is_null(column), pa.scalar(None, ground_truth.type), ground_truth)
    return column.to_pylist()


def _arrow_indices(column: Any) -> list[Any] | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_struct(column.type) or column.type.get_field_index("index") < 0:
        return None
    return pc.struct_field(column, "index").to_pylist()


def _json_rows(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, list):
        raise UsageError(f"{path}: expected a JSON list of row objects")
    return data


def _count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            count += block.count(b"\n")
    return count


def _python_batches(path: Path, rows: list[Any] | None) -> Iterator[Batch]:
    """Batches from JSON rows (a .json list, or a .jsonl file read line by line)."""
    prompts: list[Any] = []
    answers: list[Any] = []
    indices: list[Any] = []
    for row in rows if rows is not None else _jsonl_rows(path):
        cells = _row_cells(row)
        prompts.append(cells[0])
        answers.append(cells[1])
        indices.append(cells[2])
        if len(prompts) == BATCH_ROWS:
            yield Batch(prompts, answers, indices)
            prompts, answers, indices = [], [], []
    if prompts:
        yield Batch(prompts, answers, indices)


def _jsonl_rows(path: Path) -> Iterator[Any]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                yield _INVALID_JSON


def _row_cells(row: Any) -> tuple[Any, Any, Any]:
    """(prompt cell, answer cell, source index) of one JSON row, in DAPO's or a flat layout."""
    if isinstance(row, _Bad):
        return row, row, None
    if not isinstance(row, dict):
        return _WRONG_TYPE, _WRONG_TYPE, None
    prompt = next((row[n] for n in PROMPT_COLUMNS if n in row), None)
    if "reward_model" in row:
        reward_model = row["reward_model"]
        answer = reward_model.get("ground_truth") if isinstance(reward_model, dict) else _WRONG_TYPE
        if reward_model is None:
            answer = None
    else:
        answer = next((row[n] for n in ANSWER_COLUMNS if n in row), None)
    extra = row.get("extra_info")
    return prompt, answer, extra.get("index") if isinstance(extra, dict) else None


# --- preparation --------------------------------------------------------------------------------------


def prepare_dapo(
    source: str | None = None,
    out: str | Path = DEFAULT_OUT,
    template: str = "dapo",
    lang: str = "all",
    limit: int | None = None,
    strict: bool = False,
    dataset: str = "dapo-math-17k",
    on_progress: Callable[[int, int | None], None] | None = None,
) -> PrepSummary:
    """Deduplicate DAPO-Math-17K from ``source`` and write the templated prompt file ``out`` atomically.

    Malformed rows are skipped and counted by reason (``strict``: the first one raises
    :class:`UsageError` with its 1-based row number). ``lang`` keeps ``all``, ``en`` or ``zh`` problems;
    ``limit`` stops after that many rows are written. ``on_progress(rows_read, total)`` follows the read.
    A problem seen again with a different answer keeps its first answer; conflicts are reported and
    listed in ``<out stem>.conflicts.jsonl``.
    """
    check_template(template)
    if lang not in LANGS:
        raise UsageError(f"unknown language {lang!r}; choose one of: {', '.join(LANGS)}")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be a positive number of rows, not {limit}")
    started = time.monotonic()
    opened = open_source(source, dataset)
    summary = PrepSummary(source=opened.name, out=Path(out), template=template, lang=lang)
    with atomic_writer(summary.out) as handle:
        _Deduplicator(summary, handle, dataset, limit, strict).run(opened, on_progress)
    summary.conflicts_file = _write_conflicts(summary)
    summary.seconds = time.monotonic() - started
    return summary


class _Deduplicator:
    """Reads batches, keeps the first row of every problem and writes it as soon as it is seen."""

    def __init__(self, summary: PrepSummary, handle: IO[str], dataset: str, limit: int | None, strict: bool):
        self.summary = summary
        self.handle = handle
        self.dataset = dataset
        self.limit = limit
        self.strict = strict
        self.by_prompt: dict[str, tuple[str, str]] = {}  # exact prompt text -> (problem key, answer)
        self.answers: dict[str, str] = {}  # problem key -> first answer
        self.indices: set[Any] = set()
        self.saw_indices = False

    def run(self, source: Source, on_progress: Callable[[int, int | None], None] | None) -> None:
        for batch in source.batches:
            if self._take(batch, source.name):
                self.summary.stopped_at_limit = True
                break
            if on_progress is not None:
                on_progress(self.summary.rows_read, source.total)
        if self.saw_indices:
            self.summary.unique_source_indices = len(self.indices)
        self.summary.unique_problems = len(self.answers)

    def _take(self, batch: Batch, origin: str) -> bool:
        """Process one batch; ``True`` once ``limit`` rows are written."""
        summary = self.summary
        indices = batch.indices if batch.indices is not None else [None] * len(batch.prompts)
        if batch.indices is not None and any(index is not None for index in batch.indices):
            self.saw_indices = True
            self.indices.update(index for index in batch.indices if index is not None)
        for prompt, answer, index in zip(batch.prompts, batch.answers, indices, strict=True):
            summary.rows_read += 1
            if type(answer) is not str or not answer or answer[0].isspace() or answer[-1].isspace():
                answer = answer_text(answer) if not isinstance(answer, _Bad) else answer
            known = self.by_prompt.get(prompt) if type(prompt) is str else None
            if known is None:
                text = prompt_text(prompt) if not isinstance(prompt, _Bad) else prompt
                problem = None if isinstance(text, _Bad) else extract_dapo_problem(text)
                if problem is None and not isinstance(text, _Bad) and text.startswith(DAPO_PREFIX):
                    text = _EMPTY_PROMPT  # DAPO's template around nothing
                bad = text if isinstance(text, _Bad) else answer if isinstance(answer, _Bad) else None
                if bad is not None:
                    self._malformed(bad.reason, origin)
                    continue
                known = self._new_prompt(text, problem, answer, index)
                if known is None:  # first sighting of this problem: written or filtered
                    if self.limit is not None and self.summary.written >= self.limit:
                        return True
                    continue
            elif isinstance(answer, _Bad):
                self._malformed(answer.reason, origin)
                continue
            summary.duplicates += 1
            if answer != known[1]:
                self._conflict(known[0], answer)
        return False

    def _malformed(self, reason: str, origin: str) -> None:
        if self.strict:
            raise UsageError(
                f"{origin}: row {self.summary.rows_read} is malformed ({reason}); "
                "run without --strict to skip and count such rows"
            )
        self.summary.malformed[reason] += 1

    def _new_prompt(self, text: str, problem: str | None, answer: str, index: Any) -> tuple[str, str] | None:
        """Register a prompt text not seen before; ``None`` if its problem is new too."""
        templated = problem is not None
        problem = problem if templated else text.strip()
        key = problem_key(problem)
        if key in self.answers:  # same problem, differently written prompt
            self.by_prompt[text] = (key, self.answers[key])
            return key, self.answers[key]
        self.summary.untemplated += not templated
        self.answers[key] = answer
        self.by_prompt[text] = (key, answer)
        self._emit(key, problem, answer, index)
        return None

    def _emit(self, key: str, problem: str, answer: str, index: Any) -> None:
        summary = self.summary
        lang = detect_lang(problem)
        summary.langs[lang] += 1
        if summary.lang != "all" and lang != summary.lang:
            summary.filtered_by_lang += 1
            return
        if self.limit is not None and summary.written >= self.limit:
            return
        row = {
            "id": problem_id(key),
            "prompt": render_prompt(problem, summary.template),
            "label": answer,
            "source": self.dataset,
            "lang": lang,
            "problem": problem,
        }
        if index is not None:
            row["source_index"] = index
        self.handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        summary.written += 1

    def _conflict(self, key: str, answer: str) -> None:
        summary = self.summary
        summary.conflict_rows += 1
        entry = summary.conflicts.setdefault(
            key, {"id": problem_id(key), "problem": key, "kept": self.answers[key], "others": {}}
        )
        entry["others"][answer] = entry["others"].get(answer, 0) + 1


def conflicts_path(out: Path) -> Path:
    """Where the answer conflicts of ``out`` are listed: ``<stem>.conflicts.jsonl`` beside it."""
    return out.with_name(out.stem + ".conflicts.jsonl")


def _write_conflicts(summary: PrepSummary) -> Path | None:
    path = conflicts_path(summary.out)
    if not summary.conflicts:
        path.unlink(missing_ok=True)  # a list left by an earlier run would describe other data
        return None
    lines = [json.dumps(entry, ensure_ascii=False) for entry in summary.conflicts.values()]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def summary_table(summary: PrepSummary) -> Any:
    """The summary as a Rich table: rows read, malformed by reason, duplicates, conflicts, written."""
    from rich.table import Table

    table = Table(title=f"DAPO-Math-17K prep: {summary.source}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("rows read", f"{summary.rows_read:,}")
    for reason in MALFORMED_REASONS:
        if summary.malformed[reason]:
            table.add_row(f"malformed: {reason}", f"{summary.malformed[reason]:,}")
    if not summary.malformed:
        table.add_row("malformed", "0")
    if summary.unique_source_indices is not None:
        table.add_row("distinct extra_info.index", f"{summary.unique_source_indices:,}")
    table.add_row("duplicates dropped", f"{summary.duplicates:,}")
    table.add_row("unique problems", f"{summary.unique_problems:,}")
    table.add_row(
        "answer conflicts (problems / rows)", f"{len(summary.conflicts):,} / {summary.conflict_rows:,}"
    )
    if summary.untemplated:
        table.add_row("prompts not in DAPO's template (used as is)", f"{summary.untemplated:,}")
    split = ", ".join(f"{lang} {summary.langs[lang]:,}" for lang in ("en", "zh"))
    table.add_row("language split (unique problems)", split)
    if summary.lang != "all":
        table.add_row(f"dropped by --lang {summary.lang}", f"{summary.filtered_by_lang:,}")
    table.add_row(
        "rows written" + (" (stopped at --limit)" if summary.stopped_at_limit else ""), f"{summary.written:,}"
    )
    return table
