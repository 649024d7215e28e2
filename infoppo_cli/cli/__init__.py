"""The ``infoppo`` command line: Typer commands and all Rich rendering, over the library packages."""

import warnings

# torch 2.13 warns about pynvml when it is imported, which some commands' modules do; the warning says nothing
# about the user's command, so it is silenced before any of them is imported.
warnings.filterwarnings("ignore", message="The pynvml package is deprecated", category=FutureWarning)

from infoppo_cli.cli.entry import app, main  # noqa: E402

__all__ = ["app", "main"]
