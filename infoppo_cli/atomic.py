"""Files: atomic writes (a reader sees the old file or the new one, never a half-written one), JSONL
reading with the line number of every record, and the timestamp format of everything infoppo writes."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success fsync and rename it over ``path``.

    On an exception the temporary file is removed and ``path`` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_writer(path) as handle:
        handle.write(text)


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def utc_timestamp() -> str:
    """Now, in UTC, as ISO 8601 to the second (``2026-11-23T06:05:16+00:00``): every manifest and state
    file uses this one format."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line of a JSONL file: its 1-based ``number`` and either a JSON object ``record``
    or the reason it is not one (``error``)."""

    number: int
    record: dict[str, Any] | None
    error: str | None = None


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[JsonlLine]:
    """Every non-blank line of ``path``, parsed; a malformed line is yielded with its ``error``, so each
    caller applies its own policy (stop, skip and count, or report the line number)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                yield JsonlLine(number, None, f"not valid JSON ({exc.__class__.__name__})")
                continue
            if isinstance(value, dict):
                yield JsonlLine(number, value)
            else:
                yield JsonlLine(number, None, f"a JSON {type(value).__name__}, not an object")
