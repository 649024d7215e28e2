"""The shared consoles: a warning line prints its text as it is (tables fitting the terminal are
tests/cli/test_fit.py's)."""

from __future__ import annotations

import io

from infoppo_cli.cli.console import FittingConsole


def test_a_warning_line_prints_bracketed_text_as_it_is():
    from infoppo_cli.cli.console import say

    out = io.StringIO()
    say("warning", "[openrlhf] extra [bold]x[/bold]", to=FittingConsole(file=out, width=40))
    assert out.getvalue() == "warning: [openrlhf] extra [bold]x[/bold]\n"  # one line, markup not eaten
