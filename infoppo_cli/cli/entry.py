"""The ``infoppo`` command line: a thin Typer layer over the library modules."""

from __future__ import annotations

import sys
import warnings

import typer

from infoppo_cli import __version__
from infoppo_cli.cli import benches, data, report, sweep, train
from infoppo_cli.cli import eval as evaluate
from infoppo_cli.cli.console import err_console
from infoppo_cli.errors import InfoppoError

# torch 2.13 warns about pynvml on import; it says nothing about the user's command
warnings.filterwarnings("ignore", message="The pynvml package is deprecated", category=FutureWarning)

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
app.command("sweep", context_settings=sweep.CONTEXT_SETTINGS)(sweep.sweep_command)
app.command("report")(report.report_command)


def main() -> None:
    """Console-script entry point: one clear line and a non-zero exit for a user error."""
    try:
        app()
    except InfoppoError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        sys.exit(130)
