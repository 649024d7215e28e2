"""The ``infoppo`` command line: Typer commands and all Rich rendering, over the library packages."""

from infoppo_cli.cli.entry import app, main

__all__ = ["app", "main"]
