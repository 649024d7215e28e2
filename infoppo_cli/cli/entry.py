"""The ``infoppo`` command line: a thin Typer layer over the library modules."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, NoReturn

import typer
from rich.markup import escape

from infoppo_cli import __version__
from infoppo_cli.atomic import DiskFull, is_disk_full
from infoppo_cli.cli import benches, data, grade, inspect, invocation, report, sweep, train
from infoppo_cli.cli import eval as evaluate
from infoppo_cli.cli.console import err_console
from infoppo_cli.cli.help_style import HouseStyleGroup
from infoppo_cli.cli.options import with_settings
from infoppo_cli.errors import InfoppoError
from infoppo_cli.openrlhf_adapter.lifeline import watch_owner
from infoppo_cli.schema import option

app = typer.Typer(
    cls=HouseStyleGroup,
    name="infoppo",
    help="Information-Time PPO (InfoPPO) for LLM reasoning, on OpenRLHF's Ray PPO trainer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"infoppo {__version__}")
        raise typer.Exit()


@dataclass
class RootOptions:
    """``infoppo``'s own options, before a command."""

    version: bool = option(False, "Print the version and exit.", "--version", callback=_show_version)


@app.callback()
@with_settings(RootOptions)
def _root(**options: Any) -> None:
    """Train, evaluate and sweep InfoPPO."""


# The order here is the order of `infoppo --help`: data, train, evaluate, sweep, report.
app.add_typer(data.app, name="data")
app.command("train")(train.train_command)
app.command("presets")(train.presets_command)
app.command("eval")(evaluate.eval_command)
app.command("benches")(benches.benches_command)
app.command("inspect")(inspect.inspect_command)
app.command("sweep")(sweep.sweep_command)
app.command("report")(report.report_command)
app.command("grade")(grade.grade_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one clear ``error:`` line and a non-zero exit for a user error,
    whether our code or Typer's own parsing found it (exit 2), never a traceback or a box."""
    invocation.remember(argv)  # the command as typed, for a run's records
    watch_owner()  # started by a sweep: stop (as on Ctrl-C) when the sweep dies, however it dies
    try:
        code = app(args=argv, prog_name="infoppo", standalone_mode=False)
    except InfoppoError as exc:
        _fail(str(exc), exc.exit_code)
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        _fail(str(DiskFull(exc.filename or "the output")), DiskFull.exit_code)
    except typer.TyperException as exc:  # Click's errors: Typer's Click derives them from this
        code = _click_error(exc)
    except (KeyboardInterrupt, typer.Abort):
        code = 130
    if code == 130:  # Typer turns Ctrl-C inside a command into exit code 130
        err_console.print("[yellow]interrupted[/]")
    sys.exit(code if isinstance(code, int) else 0)


def _click_error(exc: typer.TyperException) -> int:
    """A usage error (or another error of Click's) as our one line. A bare group (``infoppo data``) is
    an error with nothing to say: its help, which Typer prints as the error is made, is the answer."""
    exit_code = getattr(exc, "exit_code", 2)
    if not exc.format_message().strip():
        return exit_code
    _fail(f"{exc.format_message()}{_help_hint(getattr(exc, 'ctx', None))}", exit_code)


def _fail(message: str, exit_code: int) -> NoReturn:
    text = escape(" ".join(message.split()))  # a message is plain text: "[openrlhf]" is no Rich markup
    err_console.print(f"[bold red]error:[/] {text}", highlight=False, soft_wrap=True)
    sys.exit(exit_code)


def _help_hint(ctx: typer.Context | None) -> str:
    return f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
