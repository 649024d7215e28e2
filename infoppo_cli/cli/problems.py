"""A dry run's problems: after the whole plan, each as one ``error:`` line, then exit 2."""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.markup import escape

from infoppo_cli.cli.console import err_console

EXIT_CODE = 2
"""As a refused launch: the problems are the user's to fix (``errors.UsageError``)."""


def exit_on_problems(problems: Sequence[str]) -> None:
    """Print each problem as an ``error:`` line on stderr (as the command line prints a refusal) and
    exit with :data:`EXIT_CODE`; nothing when there is none."""
    if not problems:
        return
    for problem in problems:
        text = escape(" ".join(problem.split()))  # plain text: "[openrlhf]" is no Rich markup
        err_console.print(f"[bold red]error:[/] {text}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_CODE)
