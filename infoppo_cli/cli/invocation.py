"""The ``infoppo`` command as the user typed it, kept in a run's records (``manifest.json``, the model
card) shell-quoted and with secrets redacted (``records/command.py``).

The console script's :func:`~infoppo_cli.cli.entry.main` remembers the arguments it was given; a
command started otherwise (``python -m infoppo_cli``, a sweep's ``infoppo train``) is read from
``sys.argv``. Either way the program is written ``infoppo``, as a user would type it again.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from infoppo_cli.records.command import command_text

_given: list[str] | None = None


def remember(argv: Sequence[str] | None) -> None:
    """The arguments of this process's ``infoppo`` command (``None``: ``sys.argv``'s)."""
    global _given
    _given = list(argv) if argv is not None else None


PROGRAMS = ({"infoppo"}, {"__main__.py", "infoppo_cli"})
"""How ``sys.argv[0]`` reads for the console script, and for ``python -m infoppo_cli`` (name, folder)."""


def _from_sys_argv() -> list[str] | None:
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if program is None:
        return None
    if {program.name} in PROGRAMS[:1] or {program.name, program.parent.name} == PROGRAMS[1]:
        return sys.argv[1:]
    return None


def typed_command() -> str | None:
    """``infoppo ARGS...`` of this process, quoted and redacted; ``None`` when this process was not
    started as ``infoppo`` (a library call, a test)."""
    argv = _given if _given is not None else _from_sys_argv()
    return None if argv is None else command_text(["infoppo", *argv])
