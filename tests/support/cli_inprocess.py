"""Run the console entry point inside the test process, where monkeypatching reaches it."""

from __future__ import annotations

import sys

import pytest

from infoppo_cli.cli import main


def run_cli(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """``infoppo ARGS`` in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["infoppo", *map(str, args)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (0 if code is None else code), out, err
