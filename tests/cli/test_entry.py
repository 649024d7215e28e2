"""The `infoppo` entry point: help, version, and errors as one line with the right exit code."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_process import run_infoppo

from infoppo_cli import __version__
from infoppo_cli.cli import entry as cli
from infoppo_cli.errors import EnvironmentProblem, UsageError


@pytest.mark.slow
def test_version_and_help():
    done = run_infoppo("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"infoppo {__version__}"
    done = run_infoppo("--help")
    assert done.returncode == 0
    for command in ("data", "train", "presets", "eval", "benches", "sweep", "report"):
        assert command in done.stdout


@pytest.mark.slow
def test_unknown_command_is_a_usage_error():
    done = run_infoppo("trian")
    assert done.returncode == 2 and "No such command" in done.stderr


@pytest.mark.parametrize(
    "error, code",
    [(UsageError("bad value"), 2), (EnvironmentProblem("no GPU"), 1), (KeyboardInterrupt(), 130)],
)
def test_main_turns_errors_into_one_line_and_an_exit_code(error, code, monkeypatch, capsys):
    def fail(**_):
        raise error

    monkeypatch.setattr(cli, "app", fail)
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err == ("interrupted" if code == 130 else f"error: {error}")


def test_typer_usage_errors_are_our_one_line_with_exit_2(capsys):
    for args, fragment in (
        (["data", "prep"], "error: Missing argument 'dataset'. (see `infoppo data prep --help`)"),
        (["data", "prep", "x", "--limit", "many"], "error: Invalid value for '--limit'"),
        (["trian"], "error: No such command 'trian'. Did you mean 'train'?"),
    ):
        with pytest.raises(SystemExit) as info:
            cli.main(args)
        err = capsys.readouterr().err
        assert info.value.code == 2 and err.count("\n") == 1 and err.startswith(fragment), err
        assert "╭" not in err and "Usage:" not in err


def test_a_group_without_a_command_shows_its_help_with_clicks_exit_code(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["data"])
    assert info.value.code == 2 and "prep" in capsys.readouterr().out


def test_boolean_options_show_as_flags_in_help(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    with pytest.raises(SystemExit) as info:
        cli.main(["data", "prep", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    assert "<bool>" not in out and "--strict" in out and "<int>" in out  # valued options keep their type


def test_an_error_message_in_brackets_is_shown_as_written(monkeypatch, capsys):
    def fail(**_):
        raise UsageError("preset p.toml: [openrlhf]: x = 1: [bold]not markup[/bold]")

    monkeypatch.setattr(cli, "app", fail)
    with pytest.raises(SystemExit):
        cli.main()
    assert (
        capsys.readouterr().err.strip() == "error: preset p.toml: [openrlhf]: x = 1: [bold]not markup[/bold]"
    )


@pytest.mark.parametrize(
    "command", [["data", "prep"], ["train"], ["eval"], ["inspect"], ["sweep"], ["report"], ["grade"]]
)
def test_every_help_shows_defaults_in_one_style(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as info:
        cli.main([*command, "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    assert "[default" not in out and "(default: (" not in out
    if command == ["data", "prep"]:  # Typer's own shown defaults, in the help texts' style
        assert "(default: dapo)" in out and "(default: BytedTsinghua-SIA/DAPO-Math-17k)" in out


PLANNING = [
    ["train", "--preset", "tiny-cpu", "--dry-run"],
    ["train", "--preset", "qwen3-14b", "--gamma", "1.5"],
    ["sweep", "gamma", "--preset", "tiny-cpu", "--dry-run"],
]


@pytest.mark.parametrize("argv", PLANNING, ids=lambda argv: " ".join(argv))
def test_planning_or_refusing_a_run_imports_no_torch(argv):
    """A plan, and a refusal, come back in a fraction of a second: torch (about a second to import)
    is left to the launched run."""
    code = (
        "import sys\nfrom infoppo_cli.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr[-2000:]


def test_a_full_disk_anywhere_is_one_line_naming_the_path(tmp_path, monkeypatch, capsys):
    """``data prep`` and ``eval`` ended in a traceback when their output's disk was full."""
    target = tmp_path / "out" / "samples.jsonl"

    def fail(**_):
        raise OSError(28, "No space left on device", str(target))

    monkeypatch.setattr(cli, "app", fail)
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: no space left on the device of {target}: ") and " free there" in line

    def other(**_):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(cli, "app", other)
    with pytest.raises(OSError, match="Input/output"):  # not ours to word: it stays as it is
        cli.main()
