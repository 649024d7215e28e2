"""The ``infoppo`` command line: a thin Typer layer over the library modules."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

# Typer vendors its own copy of Click (typer._click); its parser raises these, not the `click` package's.
from typer._click import exceptions as click_errors

from infoppo_cli import __version__
from infoppo_cli.cli import benches, data, grade, inspect, report, sweep, train
from infoppo_cli.cli import eval as evaluate
from infoppo_cli.cli.console import err_console
from infoppo_cli.errors import InfoppoError


def _flags_show_no_type() -> None:
    """Typer's help gives a boolean flag a ``<bool>`` type column, as if it took a value; a flag
    (``--strict``, ``--help``) takes none, so its type column stays empty, as in Click's own help."""
    from typer.core import TyperOption

    shown_type = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag and self.metavar is None else shown_type(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_show_no_type()

app = typer.Typer(
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


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Train, evaluate and sweep InfoPPO."""


# The order here is the order of `infoppo --help`: data, train, evaluate, sweep, report.
app.add_typer(data.app, name="data")
app.command("train")(train.train_command)
app.command("presets")(train.presets_command)
app.command("eval")(evaluate.eval_command)
app.command("benches")(benches.benches_command)
app.command("inspect")(inspect.inspect_command)
app.command("sweep", context_settings=sweep.CONTEXT_SETTINGS)(sweep.sweep_command)
app.command("report")(report.report_command)
app.command("grade")(grade.grade_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one clear ``error:`` line and a non-zero exit for a user error,
    whether our code or Typer's own parsing found it (exit 2), never a traceback or a box."""
    try:
        code = app(args=argv, prog_name="infoppo", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help(), nl=False)
        code = exc.exit_code  # Click's choice for a bare group: the help, and the exit code of a usage error
    except click_errors.UsageError as exc:
        _fail(f"{exc.format_message()}{_help_hint(exc.ctx)}", exc.exit_code)
    except click_errors.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except InfoppoError as exc:
        _fail(str(exc), exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        code = 130
    if code == 130:  # Typer turns Ctrl-C inside a command into exit code 130
        err_console.print("[yellow]interrupted[/]")
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, exit_code: int) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {' '.join(message.split())}", highlight=False, soft_wrap=True)
    sys.exit(exit_code)


def _help_hint(ctx: typer.Context | None) -> str:
    return f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
