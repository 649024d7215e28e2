"""``<run>/<phase>.log``: what the sweep writes around a phase's output, and why a failed phase failed.

Every attempt appends to the same file. The sweep's own lines start with ``=== `` (the attempt's header,
the job it became, the exit code), followed by the command line after the header; everything else is
the phase's own output. A failed phase is summed up by that attempt's last ``error:`` line (the line
``infoppo train`` and ``infoppo eval`` print for a problem), else by its last line with any words in it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from infoppo_cli.records import utc_timestamp

MARK = "=== "
"""The start of every line the sweep itself writes into a phase's log."""
HEADER = MARK + "infoppo sweep: "
FOOTER = MARK + "exit code "
TAIL_BYTES = 256 * 1024
"""How much of a log's end is read for the failure line (an attempt's output can be long)."""
MAX_REASON = 400
"""Characters of a failure line kept in sweep.json (a line can be a whole pasted config)."""

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_WORD = re.compile(r"[A-Za-z0-9]")


def header(run_name: str, phase_name: str, attempt: int, argv: Sequence[str]) -> str:
    """The lines that open an attempt: which run and phase, when, and the exact command."""
    title = f"{HEADER}{run_name} {phase_name}, attempt {attempt}, {utc_timestamp()}"
    return f"{title}\n$ {shlex.join(argv)}\n"


def note(text: str) -> str:
    """A line of the sweep's own (e.g. the job the phase became)."""
    return f"{MARK}{text}\n"


def footer(exit_code: int) -> str:
    """The line that closes an attempt's output; what follows it (a job's ``ray stop``) is not the phase's."""
    return f"{FOOTER}{exit_code}\n"


def plain(line: str) -> str:
    """A log line without terminal colour codes or surrounding blanks."""
    return _ANSI.sub("", line).strip()


def attempt_lines(path: Path) -> list[str]:
    """The last attempt's own output lines: no colour codes, no blank lines, none of the sweep's."""
    lines = _tail(path).splitlines()
    starts = [index for index, line in enumerate(lines) if plain(line).startswith(HEADER)]
    begin = starts[-1] + 1 if starts else 0
    output: list[str] = []
    for position, raw in enumerate(lines[begin:]):
        line = plain(raw)
        if line.startswith(FOOTER):
            break
        if not line or line.startswith(MARK) or (position == 0 and starts and line.startswith("$ ")):
            continue
        output.append(line)
    return output


def failure_reason(path: Path, launcher_note: str | None) -> str | None:
    """Why a phase failed, as the sweep records it: the phase's own ``error:`` line, else what its
    launcher knows (a signal, a SLURM timeout), else the last line it printed."""
    lines = attempt_lines(path)
    return _last_error(lines) or launcher_note or _last_worded(lines)


def _last_error(lines: Sequence[str]) -> str | None:
    errors = [line for line in lines if line.startswith("error:")]
    return _shortened(errors[-1]) if errors else None


def _last_worded(lines: Sequence[str]) -> str | None:
    worded = [line for line in lines if _WORD.search(line)]
    return _shortened(worded[-1]) if worded else None


def _shortened(line: str) -> str:
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 3] + "..."


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if size > TAIL_BYTES:
        text = text.partition("\n")[2]  # the first line was cut by the seek
    return text
