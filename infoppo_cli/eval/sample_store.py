"""``samples.jsonl``: the append-only record of every graded sample of an evaluation.

One JSON object per line (see :class:`SampleRecord`). Lines are appended and flushed to disk as
samples are graded, so an interrupted evaluation keeps everything it finished. On reopening, the
store reads what is there and the runner only generates what is missing. A crash in the middle of
a write can leave a torn last line: it is dropped (and cut off before the next append); a malformed
line anywhere else is an error, never silently discarded. A key already stored is never written
twice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from infoppo_cli.errors import UsageError

SAMPLES_FILE = "samples.jsonl"

SampleKey = tuple[str, str, int]
"""(bench, problem id, sample index)."""

_REQUIRED = ("bench", "id", "sample", "response", "extracted", "gold", "correct", "reason")


@dataclass(frozen=True)
class SampleRecord:
    """One graded sample, as stored on one line of ``samples.jsonl``."""

    bench: str
    id: str
    sample: int
    response: str
    extracted: str | None
    gold: str
    correct: bool
    reason: str
    num_tokens: int | None = None
    finish_reason: str | None = None
    prompt_sha: str | None = None

    @property
    def key(self) -> SampleKey:
        return (self.bench, self.id, self.sample)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> SampleRecord:
        """Build a record from a parsed line; ``ValueError`` when a field is missing or mistyped."""
        missing = [name for name in _REQUIRED if name not in row]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        record = cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row})
        for name in ("bench", "id", "response", "gold", "reason"):
            if not isinstance(getattr(record, name), str):
                raise ValueError(f"{name} must be a string, got {getattr(record, name)!r}")
        if not isinstance(record.sample, int) or isinstance(record.sample, bool) or record.sample < 0:
            raise ValueError(f"sample must be an integer >= 0, got {record.sample!r}")
        if not isinstance(record.correct, bool):
            raise ValueError(f"correct must be true or false, got {record.correct!r}")
        return record


class SampleStore:
    """The ``samples.jsonl`` of one output directory: read once, then appended to."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.path = Path(out_dir) / SAMPLES_FILE
        self._records: dict[SampleKey, SampleRecord] = {}
        self._good_bytes = 0
        self._file_bytes = 0
        self._missing_newline = False
        self.dropped_torn_line = False
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        self._file_bytes = len(data)
        lines = data.split(b"\n")
        offset = 0
        for number, raw in enumerate(lines, start=1):
            is_last = number == len(lines)
            if is_last and not raw:
                break
            end = offset + len(raw) + (0 if is_last else 1)
            if not is_last and not raw.strip():
                offset = end
                continue
            try:
                record = SampleRecord.from_dict(json.loads(raw.decode("utf-8")))
            except (ValueError, TypeError, UnicodeDecodeError) as exc:
                if is_last:  # written without its newline: a torn write from a crash
                    self.dropped_torn_line = True
                    break
                raise UsageError(
                    f"{self.path} line {number} is not a valid sample ({exc}); fix or remove it"
                ) from exc
            self._records.setdefault(record.key, record)
            self._missing_newline = is_last  # a complete last record whose newline never made it
            offset = end
        self._good_bytes = offset

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def __iter__(self) -> Iterator[SampleRecord]:
        return iter(self._records.values())

    def get(self, key: SampleKey) -> SampleRecord | None:
        return self._records.get(key)

    def append(self, records: Iterable[SampleRecord]) -> int:
        """Append the records whose key is not stored yet, flush and fsync; returns how many."""
        new: dict[SampleKey, SampleRecord] = {}
        for record in records:
            if record.key not in self._records:
                new.setdefault(record.key, record)
        if not new:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = "".join(record.to_json() + "\n" for record in new.values()).encode("utf-8")
        if self._missing_newline:
            payload = b"\n" + payload
        with open(self.path, "ab") as handle:
            if handle.tell() != self._file_bytes:
                raise UsageError(
                    f"{self.path} changed while this evaluation was running; is another `infoppo eval` "
                    "writing to the same --out?"
                )
            if self._file_bytes != self._good_bytes:  # cut off the torn last line before appending
                handle.truncate(self._good_bytes)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        self._good_bytes += len(payload)
        self._file_bytes = self._good_bytes
        self._missing_newline = False
        self._records.update(new)
        return len(new)
