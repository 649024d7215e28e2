"""JSONL files: reading one line by line, and the append-only logs infoppo keeps (an evaluation's
``samples.jsonl``, a run's ``metrics.jsonl``, ``infoppo inspect``'s entropy cache).

The torn-line policy, the same for every log. An append writes whole lines, then flushes and fsyncs
them, so a crash can only leave the *last* line short of its newline:

* a last line without its newline that is not a whole record is *torn*: it is skipped
  (:attr:`JsonlLine.torn`, :attr:`JsonlLog.torn_line`) and the next append cuts it off first;
* a last line that is a whole record but lacks its newline is kept; the next append writes the
  newline first;
* a bad line that does end with a newline was written whole, so it is damage, not a crash: a log being
  read to be extended refuses it (:class:`UsageError` naming the file and the line); a plain reader
  (:func:`iter_jsonl`) hands it over with its ``error`` and the caller says what it skipped.

A log remembers the size it last saw, and an append to a file that someone else has changed since is
refused, so two writers never interleave their lines. Nothing is written by reading.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from infoppo_cli.errors import UsageError
from infoppo_cli.records.text import NestedTooDeeply, loads

T = TypeVar("T")


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line of a JSONL file: its 1-based ``number`` and either a JSON object ``record``
    or the reason it is not one (``error``); ``torn`` for a bad last line cut short of its newline."""

    number: int
    record: dict[str, Any] | None
    error: str | None = None
    torn: bool = False


UTF8_BOM = b"\xef\xbb\xbf"


def parse_line(number: int, raw: bytes) -> JsonlLine:
    """One line, its newline included when it has one, parsed. A UTF-8 byte-order mark before the
    first line is read past (editors on Windows write one); JSON nested too deeply for the parser is
    a bad line like any other."""
    cut_short = not raw.endswith(b"\n")
    if number == 1 and raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    try:
        value = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = exc if isinstance(exc, NestedTooDeeply) else exc.__class__.__name__
        return JsonlLine(number, None, f"not valid JSON ({reason})", torn=cut_short)
    if isinstance(value, dict):
        return JsonlLine(number, value)
    return JsonlLine(number, None, f"a JSON {type(value).__name__}, not an object", torn=cut_short)


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[JsonlLine]:
    """Every non-blank line of ``path``, parsed; a bad line is yielded with its ``error`` (and ``torn``
    when it is a last line cut short), so each reader can name the line or count what it skipped."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield parse_line(number, raw)


def _lines_with_ends(data: bytes) -> Iterator[tuple[int, bytes, int]]:
    """``(number, raw line, offset after it)``; lines end at ``\\n`` only (a JSON text holds no other)."""
    offset = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        end = min(offset + len(raw) + 1, len(data))
        if end > offset:
            yield number, data[offset:end], end
        offset = end


class JsonlLog:
    """The append-only JSONL file ``path``, whose lines are ``noun``\\ s, and whose ``other_writer``
    would explain a change by someone else (both for errors): read once with :meth:`read`, then
    extended with :meth:`append` (see the module's torn-line policy)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        noun: str = "record",
        other_writer: str = "another process writing the same file",
    ) -> None:
        self.path = Path(path)
        self.noun = noun
        self.other_writer = other_writer
        self.torn_line: int | None = None
        """The number of the torn last line that was skipped, which the next append cuts off."""
        self._seen: int | None = None  # the file's size when this log last looked; None: not yet
        self._whole = 0  # bytes up to the end of the last whole line: where the next line goes
        self._missing_newline = False

    def read(self, parse: Callable[[dict[str, Any]], T] | None = None) -> list[tuple[int, T]]:
        """``(line number, value)`` of every whole line, ``parse`` making the owner's value of a record
        (``ValueError`` or ``TypeError`` refuses it: a last line cut short is then torn, any other is an
        error)."""
        data = self.path.read_bytes() if self.path.exists() else b""
        self._seen, self._whole, self._missing_newline, self.torn_line = len(data), 0, False, None
        found: list[tuple[int, Any]] = []
        for number, raw, end in _lines_with_ends(data):
            if raw.strip():
                line = parse_line(number, raw)
                value, problem = self._value(line, parse)
                if problem is not None:
                    self._refuse_unless_torn(line, raw, problem)
                    break
                found.append((number, value))
                self._missing_newline = not raw.endswith(b"\n")
            self._whole = end
        return found

    @staticmethod
    def _value(line: JsonlLine, parse: Callable[[dict[str, Any]], Any] | None) -> tuple[Any, str | None]:
        if line.record is None:
            return None, line.error
        try:
            return (parse(line.record) if parse else line.record), None
        except (ValueError, TypeError) as exc:
            return None, str(exc)

    def _refuse_unless_torn(self, line: JsonlLine, raw: bytes, problem: str) -> None:
        if raw.endswith(b"\n"):
            raise UsageError(
                f"{self.path} line {line.number} is not a valid {self.noun} ({problem}); fix or remove it"
            )
        self.torn_line = line.number

    def append(self, lines: Iterable[str]) -> int:
        """Append ``lines`` (JSON texts without their newline), flush and fsync them; returns how many.
        A torn last line is cut off first; a file another writer changed since is refused."""
        texts = list(lines)
        if not texts:
            return 0
        if self._seen is None:
            self._find_end()
        payload = "".join(text + "\n" for text in texts).encode("utf-8")
        if self._missing_newline:
            payload = b"\n" + payload
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as handle:
            if handle.tell() != self._seen:
                raise UsageError(f"{self.path} changed while infoppo was writing it; is {self.other_writer}?")
            if self._seen != self._whole:
                handle.truncate(self._whole)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        self._whole += len(payload)
        self._seen, self._missing_newline = self._whole, False
        return len(texts)

    def _find_end(self) -> None:
        """Where the next line goes, from the last line alone: a log extended without being read (the
        trainer's ``metrics.jsonl`` after a resume) leaves its other lines to their readers."""
        data = self.path.read_bytes() if self.path.exists() else b""
        self._seen = self._whole = len(data)
        last = data[data.rfind(b"\n") + 1 :]
        if not last.strip():
            return
        if parse_line(0, last).record is None:
            self._whole -= len(last)
            self.torn_line = data.count(b"\n") + 1
        else:
            self._missing_newline = True
