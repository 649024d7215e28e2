"""The `infoppo` entry point: help, version, and errors as one line with the right exit code."""

from __future__ import annotations

import pytest
from cli_process import run_infoppo

from infoppo_cli import __version__
from infoppo_cli.cli import entry as cli
from infoppo_cli.errors import EnvironmentProblem, UsageError


def test_version_and_help():
    done = run_infoppo("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"infoppo {__version__}"
    done = run_infoppo("--help")
    assert done.returncode == 0
    for command in ("data", "train", "presets", "eval", "benches", "sweep", "report"):
        assert command in done.stdout


def test_unknown_command_is_a_usage_error():
    done = run_infoppo("trian")
    assert done.returncode == 2 and "No such command" in done.stderr


@pytest.mark.parametrize(
    "error, code",
    [(UsageError("bad value"), 2), (EnvironmentProblem("no GPU"), 1), (KeyboardInterrupt(), 130)],
)
def test_main_turns_errors_into_one_line_and_an_exit_code(error, code, monkeypatch, capsys):
    def fail():
        raise error

    monkeypatch.setattr(cli, "app", fail)
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err == ("interrupted" if code == 130 else f"error: {error}")
