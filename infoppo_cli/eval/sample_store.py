"""``samples.jsonl``: the append-only record of every graded sample of an evaluation.

One JSON object per line (see :class:`SampleRecord`). Lines are appended and flushed to disk as
samples are graded, so an interrupted evaluation keeps everything it finished. On reopening, the
store reads what is there and the runner only generates what is missing. A torn last line (a crash
mid-write) is dropped and a damaged one anywhere else is an error, as for every log
(:mod:`infoppo_cli.records.jsonl`). A key already stored is never written twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from infoppo_cli.records import JsonlLog
from infoppo_cli.records.text import dumps, valid_text

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
        return dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> SampleRecord:
        """Build a record from a parsed line; ``ValueError`` when a field is missing or mistyped."""
        missing = [name for name in _REQUIRED if name not in row]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        values = {f.name: row[f.name] for f in fields(cls) if f.name in row}
        record = cls(**{k: valid_text(v) if isinstance(v, str) else v for k, v in values.items()})
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
        self._log = JsonlLog(self.path, "sample", "another `infoppo eval` writing to the same --out")
        self._records: dict[SampleKey, SampleRecord] = {}
        for _, record in self._log.read(SampleRecord.from_dict):
            self._records.setdefault(record.key, record)
        self.dropped_torn_line = self._log.torn_line is not None

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
        self._log.append(record.to_json() for record in new.values())
        self._records.update(new)
        return len(new)
