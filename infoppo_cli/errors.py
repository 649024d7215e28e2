"""Errors that the CLI turns into one clear line and an exit code, never a traceback."""

from __future__ import annotations


class InfoppoError(Exception):
    """A problem the user can fix; ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class UsageError(InfoppoError):
    """Bad input: an unknown name, an invalid value, a missing or malformed file (exit code 2)."""

    exit_code = 2


class EnvironmentProblem(InfoppoError):
    """The machine lacks something the command needs, such as a CUDA GPU or a pinned package (exit 1)."""

    exit_code = 1
