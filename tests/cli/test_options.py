"""Options declared once: Typer options built from settings fields, and the shared Annotated options."""

from __future__ import annotations

import dataclasses

import typer
from typer.testing import CliRunner

from infoppo_cli.cli.options import SeedOption, option_parameter, settings_options, with_parameters
from infoppo_cli.eval.settings import EvalSettings, option


@dataclasses.dataclass(frozen=True)
class Toy:
    size: int = option(3, "How many.", "--size", "-s")
    name: str | None = option(None, "Who.", identity=True, default_text="nobody")
    hidden: int = 0  # no declaration: not an option


def _app(settings_cls):
    seen = {}
    app = typer.Typer()

    @app.command()
    @with_parameters([*settings_options(settings_cls), option_parameter("seed", SeedOption)])
    def command(**options):
        seen.update(options)

    return app, seen


def test_options_come_from_the_fields_and_not_given_is_none():
    app, seen = _app(Toy)
    result = CliRunner().invoke(app, ["-s", "5"])
    assert result.exit_code == 0, result.output
    assert seen == {"size": 5, "name": None, "seed": None}


def test_help_shows_each_declared_default_once():
    app, _ = _app(Toy)
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "How many. (default: 3)" in result.output
    assert "Who. (default: nobody)" in result.output
    assert "--hidden" not in result.output and "--seed" in result.output


def test_every_eval_setting_is_an_option_with_its_default_in_the_help():
    names = [p.name for p in settings_options(EvalSettings)]
    assert names == [f.name for f in dataclasses.fields(EvalSettings)]
    helps = {p.name: p.default.help for p in settings_options(EvalSettings)}
    assert helps["samples"].endswith("(default: 16)")
    assert helps["grade_timeout"].endswith("(default: 10.0)")
    assert "--tensor-parallel" in helps["engines"]


def test_a_bad_value_is_refused_by_typer():
    app, _ = _app(Toy)
    result = CliRunner().invoke(app, ["--size", "many"])
    assert result.exit_code == 2
