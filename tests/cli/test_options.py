"""Options declared once: Typer options built from settings fields (``infoppo_cli.schema.option``)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer
from typer.testing import CliRunner

from infoppo_cli.cli.options import (
    given_fields,
    given_flag,
    option_parameter,
    settings_options,
    with_parameters,
)
from infoppo_cli.eval.settings import EvalSettings
from infoppo_cli.schema import option, option_fields

SeedOption = Annotated[int | None, typer.Option("--seed", help="A command's own option.", show_default=False)]


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
    # bench_files is no option: it holds the files of --bench NAME=FILE, parsed from --bench
    assert names == [f.name for f in dataclasses.fields(EvalSettings) if f.name != "bench_files"]
    helps = {p.name: p.default.help for p in settings_options(EvalSettings)}
    assert helps["samples"].endswith("(default: 16)")
    assert helps["grade_timeout"].endswith("(default: 10.0)")
    assert "--tensor-parallel" in helps["engines"]


@dataclasses.dataclass(frozen=True)
class Listed:
    names: tuple[str, ...] = option((), "Names, comma-separated.", cli_type=str)
    count: int = option(1, "How many.")


def test_cli_type_and_exclude_shape_the_options_and_given_keeps_the_settings_fields():
    assert [p.name for p in settings_options(Listed, exclude=["count"])] == ["names"]
    app, seen = _app(Listed)
    result = CliRunner().invoke(app, ["--names", "a,b", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert seen == {"names": "a,b", "count": None, "seed": 3}  # the declared cli_type: one text
    assert given_fields(seen, Listed) == {"names": "a,b"}  # not given: None; --seed is no field of Listed


@dataclasses.dataclass(frozen=True)
class Switches:
    must: str = option(dataclasses.MISSING, "Required.", required=True)
    flag: bool = option(True, "On or off.", "--flag/--no-flag")
    items: list[str] = option(None, "Repeatable.", "--item", default_factory=list)
    lam: float | None = option(None, "Two spellings.", "--lambda", "--lam")


def test_switches_lists_spellings_and_required_options():
    app, seen = _app(Switches)
    assert CliRunner().invoke(app, []).exit_code == 2  # --must is required
    result = CliRunner().invoke(
        app, ["--must", "x", "--no-flag", "--item", "a", "--item", "b", "--lam", "0.5"]
    )
    assert result.exit_code == 0, result.output
    assert given_fields(seen, Switches) == {"must": "x", "flag": False, "items": ["a", "b"], "lam": 0.5}
    app, seen = _app(Switches)
    CliRunner().invoke(app, ["--must", "x"])
    assert given_fields(seen, Switches) == {"must": "x"}  # a switch not given is None, not its default
    assert option_fields(Switches)["--no-flag"] == "flag" and option_fields(Switches)["--lam"] == "lam"
    assert (
        given_flag(Switches, "flag", False) == "--no-flag" and given_flag(Switches, "lam", 1.0) == "--lambda"
    )


def test_a_prefix_lets_two_classes_share_a_field_name():
    names = [p.name for p in settings_options(Listed, prefix="other_")]
    assert names == ["other_names", "other_count"]
    assert given_fields({"other_count": 2, "count": 5}, Listed, prefix="other_") == {"count": 2}
