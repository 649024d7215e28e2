"""Errors that the CLI turns into one clear line and an exit code, never a traceback."""

from __future__ import annotations

TOO_DEEP = "nested too deeply to read"
"""What every reader of a data file (JSON, JSONL, TOML) says of a document nested too deeply for its
parser: malformed, like any other bad text, never a ``RecursionError``."""


class InfoppoError(Exception):
    """A problem the user can fix; ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class UsageError(InfoppoError):
    """Bad input: an unknown name, an invalid value, a missing or malformed file (exit code 2)."""

    exit_code = 2


class EnvironmentProblem(InfoppoError):
    """The machine lacks something the command needs, such as a CUDA GPU or a pinned package (exit 1)."""

    exit_code = 1
