"""Reading a prompt source for ``data prep``: a local parquet/jsonl/json file or a Hugging Face id,
streamed as batches of (prompt cell, answer cell, source index), with every malformed cell marked by the
reason it is malformed. The layouts and the cells of one row are :mod:`infoppo_cli.data.rows`'; Arrow
sources are read column by column under the same names, for speed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infoppo_cli.data import hub
from infoppo_cli.data.rows import (
    ANSWER_COLUMNS,
    EXTRA_INFO,
    GROUND_TRUTH,
    INVALID_JSON,
    PROMPT_COLUMNS,
    REWARD_MODEL,
    SOURCE_INDEX,
    WRONG_TYPE,
    row_cells,
)
from infoppo_cli.errors import UsageError
from infoppo_cli.records import iter_jsonl
from infoppo_cli.records.text import loads

DATASETS = {"dapo-math-17k": "BytedTsinghua-SIA/DAPO-Math-17k"}
"""Dataset names ``data prep`` knows, with their Hugging Face ids."""

BATCH_ROWS = 65_536


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


def open_source(source: str | None, dataset: str = "dapo-math-17k") -> Source:
    """Open a Hugging Face dataset id or a local parquet/jsonl/json file for streaming."""
    if dataset not in DATASETS:
        raise UsageError(f"unknown dataset {dataset!r}; choose from: {', '.join(DATASETS)}")
    source = source or DATASETS[dataset]
    path = Path(source).expanduser()
    if path.is_file():
        return _open_local(path)
    if path.is_dir():
        raise UsageError(f"--source {source} is a directory; give a .parquet/.jsonl/.json file")
    if path.exists():
        raise UsageError(f"--source {source} is not a regular file (a FIFO, device or socket); give a file")
    if (
        path.suffix.lower() in (".parquet", ".jsonl", ".json")
        or path.is_dir()
        or not _looks_like_hub_id(source)
    ):
        raise UsageError(f"no such file: {source} (give a .parquet/.jsonl/.json file or a Hugging Face id)")
    return _open_hub(source)


def _looks_like_hub_id(source: str) -> bool:
    """``owner/name``; ``./x``, ``../x`` and ``~/x`` are paths (no Hub name starts with a dot or ~)."""
    return re.fullmatch(r"[\w-][\w.-]*/[\w.-]+", source) is not None


def _open_local(path: Path) -> Source:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq  # lazy: heavy, kept off start-up

        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:
            raise UsageError(f"{path}: not a readable parquet file ({exc})") from None
        columns = _arrow_columns(parquet.schema_arrow.names, str(path))
        batches = parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns)
        return Source(str(path), parquet.metadata.num_rows, _arrow_batches(batches, columns, str(path)))
    if suffix in (".jsonl", ".json"):
        _refuse_binary(path)
        rows = _json_rows(path) if suffix == ".json" else None
        total = len(rows) if rows is not None else _count_lines(path)
        return Source(str(path), total, _python_batches(path, rows))
    raise UsageError(f"{path}: unsupported file type {suffix or '(none)'}; use .parquet, .jsonl or .json")


HUB_DATA_ADVICE = (
    "download data/dapo-math-17k.parquet from it and pass --source path/to/dapo-math-17k.parquet"
)


def _open_hub(hf_id: str) -> Source:
    import datasets  # lazy: heavy, kept off start-up

    hub.hub_unavailable()  # without network: the cache only, at once (no retries), as eval and train
    try:
        dataset = datasets.load_dataset(hf_id, split="train")
    except Exception as exc:  # offline, unknown id, no access: the remedy is the same
        raise hub.hub_error(f"{hf_id} from the Hugging Face Hub", exc, HUB_DATA_ADVICE) from None
    columns = _arrow_columns(dataset.column_names, hf_id)
    tables = dataset.select_columns(columns).with_format("arrow").iter(batch_size=BATCH_ROWS)
    record_batches = (batch for table in tables for batch in table.to_batches())
    return Source(hf_id, dataset.num_rows, _arrow_batches(record_batches, columns, hf_id))


def _arrow_columns(names: list[str], origin: str) -> list[str]:
    """[prompt column, answer column(, "extra_info")] of an Arrow source, or a UsageError."""
    prompt = next((n for n in PROMPT_COLUMNS if n in names), None)
    answer = REWARD_MODEL if REWARD_MODEL in names else next((n for n in ANSWER_COLUMNS if n in names), None)
    if prompt is None or answer is None:
        wanted = "prompt/problem/question column" if prompt is None else "reward_model or label/answer column"
        raise UsageError(f"{origin}: no {wanted}; columns are {', '.join(names)}")
    return [prompt, answer] + ([EXTRA_INFO] if EXTRA_INFO in names else [])


def _arrow_batches(batches: Iterator[Any], columns: list[str], origin: str) -> Iterator[Batch]:
    import pyarrow as pa  # lazy: heavy, kept off start-up

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
            answers=_arrow_answers(batch.column(answer), is_reward_model=answer == REWARD_MODEL),
            indices=_arrow_indices(batch.column(EXTRA_INFO)) if len(columns) > 2 else None,
        )


def _arrow_prompts(column: Any) -> list[Any]:
    """Prompt cells as Python values; a one-message list column is unpacked without building dicts."""
    import pyarrow as pa  # lazy: heavy, kept off start-up
    import pyarrow.compute as pc  # lazy: heavy, kept off start-up

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
    import pyarrow as pa  # lazy: heavy, kept off start-up
    import pyarrow.compute as pc  # lazy: heavy, kept off start-up

    if is_reward_model:
        if not pa.types.is_struct(column.type) or column.type.get_field_index(GROUND_TRUTH) < 0:
            return [WRONG_TYPE] * len(column)
        ground_truth = pc.struct_field(column, GROUND_TRUTH)
        column = pc.if_else(pc.is_null(column), pa.scalar(None, ground_truth.type), ground_truth)
    return column.to_pylist()


def _arrow_indices(column: Any) -> list[Any] | None:
    import pyarrow as pa  # lazy: heavy, kept off start-up
    import pyarrow.compute as pc  # lazy: heavy, kept off start-up

    if not pa.types.is_struct(column.type) or column.type.get_field_index(SOURCE_INDEX) < 0:
        return None
    return pc.struct_field(column, SOURCE_INDEX).to_pylist()


_UNICODE_BOMS = (  # the longer marks first: UTF-32 LE starts with UTF-16 LE's
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_MAGIC = ((b"\x1f\x8b", "gzip-compressed; decompress it first"), (b"PAR1", "parquet; name it .parquet"))


def _refuse_binary(path: Path) -> None:
    """A JSON file is UTF-8 text without NUL bytes; anything else would otherwise read as thousands of
    'invalid JSON' rows. The refusal says what the file is when its first bytes tell (a UTF-16 or UTF-32
    byte-order mark, gzip's or parquet's magic number)."""
    with path.open("rb") as handle:
        head = handle.read(8192)
    encoding = next((name for bom, name in _UNICODE_BOMS if head.startswith(bom)), None)
    if encoding is not None:
        raise UsageError(
            f"{path}: the file is {encoding} text (it starts with a {encoding} byte-order mark) and must be "
            f"UTF-8; convert it, e.g. iconv -f {encoding} -t UTF-8 {path} > {path.stem}.utf8{path.suffix}"
        )
    kind = next((what for magic, what in _MAGIC if head.startswith(magic)), None)
    if kind is not None:
        raise UsageError(f"{path}: a binary file, not UTF-8 JSON text: it is {kind}")
    try:
        head.decode("utf-8")
        undecodable = None
    except UnicodeDecodeError as exc:  # a character cut by the 8 KiB boundary is still text
        undecodable = None if exc.start > len(head) - 4 else exc.start
    if b"\x00" in head:
        raise UsageError(f"{path}: a binary file, not UTF-8 JSON text (it holds NUL bytes)")
    if undecodable is not None:
        raise UsageError(
            f"{path}: not UTF-8 JSON text (byte {head[undecodable]:#04x} at offset {undecodable} is not "
            "UTF-8; Latin-1 or another encoding?): convert the file to UTF-8"
        )


def _json_rows(path: Path) -> list[Any]:
    try:
        data = loads(path.read_text(encoding="utf-8-sig"))
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
        cells = row_cells(row)
        prompts.append(cells[0])
        answers.append(cells[1])
        indices.append(cells[2])
        if len(prompts) == BATCH_ROWS:
            yield Batch(prompts, answers, indices)
            prompts, answers, indices = [], [], []
    if prompts:
        yield Batch(prompts, answers, indices)


def _jsonl_rows(path: Path) -> Iterator[Any]:
    """The rows of a JSONL file, read as every JSONL input is (``records.jsonl``: a byte-order mark
    accepted, a line that is not a JSON object, or is nested too deeply, malformed)."""
    for line in iter_jsonl(path):
        if line.record is not None:
            yield line.record
        else:  # JSON that is not an object (a list, a number) is a row of the wrong type
            yield INVALID_JSON if line.error.startswith("not valid JSON") else WRONG_TYPE
