"""Every --help in one style: defaults written as (default: x), flags without a type column."""

from __future__ import annotations

from enum import Enum

import typer
from typer.testing import CliRunner

from infoppo_cli.cli.help_style import HouseStyleGroup


class Colour(Enum):
    RED = "red"


def house_app() -> typer.Typer:
    app = typer.Typer(cls=HouseStyleGroup, add_completion=False)

    @app.command()
    def run(
        size: int = typer.Option(3, help="How many."),
        names: list[str] = typer.Option(["a", "b"], help="Names."),
        colour: Colour = typer.Option(Colour.RED, help="Colour."),
        strict: bool = typer.Option(False, "--strict", help="Stop early."),
        check: bool = typer.Option(True, "--check/--no-check", help="Check it."),
        where: str = typer.Option("x", help="Where.", show_default="the cwd"),
        quiet: str = typer.Option(None, help="Unset."),
        said: int = typer.Option(7, help="Said elsewhere.", show_default=False),
        markup: str = typer.Option("[x]", help="Brackets."),
    ) -> None:
        """Run."""

    @app.command()
    def other() -> None:
        """Other."""

    return app


def help_lines(app: typer.Typer, *args: str) -> dict[str, str]:
    """Each option's help row (its flag -> the row, without the box), at a width nothing wraps at."""
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [" ".join(line.strip("│ ").split()) for line in result.output.splitlines() if "│ --" in line]
    return {row.split()[0]: row for row in rows}


def test_defaults_are_written_into_the_help_in_one_style():
    rows = help_lines(house_app(), "run")
    assert rows["--size"] == "--size <int> How many. (default: 3)"
    assert rows["--names"] == "--names <list[str]> Names. (default: a, b)"
    assert rows["--colour"].endswith("Colour. (default: red)")
    assert rows["--check"] == "--check --no-check Check it. (default: check)"
    assert rows["--where"] == "--where <str> Where. (default: the cwd)"
    assert rows["--markup"] == "--markup <str> Brackets. (default: [x])"  # a default is no markup
    assert rows["--quiet"] == "--quiet <str> Unset." and rows["--said"] == "--said <int> Said elsewhere."
    assert rows["--strict"] == "--strict Stop early."


def test_flags_show_no_type_column():
    rows = help_lines(house_app(), "run")
    assert rows["--strict"] == "--strict Stop early."
    assert rows["--help"] == "--help Show this message and exit."
    assert help_lines(house_app())["--help"] == "--help Show this message and exit."  # the group's own


def test_the_style_is_applied_once_however_often_help_is_asked():
    app = house_app()
    assert help_lines(app, "run") == help_lines(app, "run")
    assert help_lines(app, "run")["--size"] == "--size <int> How many. (default: 3)"
