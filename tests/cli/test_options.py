"""Options declared once, one way: fields of settings dataclasses (``infoppo_cli.schema.option``) that
``with_settings`` adds to a command; those several commands share declared once."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from infoppo_cli.cli import options as options_module
from infoppo_cli.cli.options import Settings, given_fields, settings_options, with_settings
from infoppo_cli.eval.settings import EvalSettings
from infoppo_cli.schema import flag_of, option, option_fields


@dataclasses.dataclass(frozen=True)
class Own:
    """A command's own option, declared as every option is."""

    seed: int | None = option(None, "A command's own option.")


@dataclasses.dataclass(frozen=True)
class Toy:
    size: int = option(3, "How many.", "--size", "-s")
    name: str | None = option(None, "Who.", identity=True, default_text="nobody")
    hidden: int = 0  # no declaration: not an option


def _app(settings_cls):
    seen = {}
    app = typer.Typer()

    @app.command()
    @with_settings(settings_cls, Own)
    def command(**options):
        seen.update(options)

    return app, seen


def help_of(parameter) -> str:
    """The help text of an ``Annotated`` option parameter."""
    return typing.get_args(parameter.annotation)[1].help


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
    helps = {p.name: help_of(p) for p in settings_options(EvalSettings)}
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
    assert flag_of(Switches, "flag", False) == "--no-flag" and flag_of(Switches, "lam", 1.0) == "--lambda"


def test_a_prefix_lets_two_classes_share_a_field_name():
    names = [p.name for p in settings_options(Listed, prefix="other_")]
    assert names == ["other_names", "other_count"]
    assert given_fields({"other_count": 2, "count": 5}, Listed, prefix="other_") == {"count": 2}


NameArgument = Annotated[str, typer.Argument(help="A name.")]


def test_a_command_lists_its_arguments_then_its_settings_in_order():
    @with_settings(Settings(Listed, prefix="l_", exclude=["count"], hidden=["names"], panel="Listed"), Own)
    def command(name: NameArgument, **options):
        return name, options

    parameters = list(inspect.signature(command).parameters.values())
    assert [p.name for p in parameters] == ["name", "l_names", "seed"]
    info = typing.get_args(parameters[1].annotation)[1]
    assert (info.hidden, info.rich_help_panel) == (True, "Listed")
    result = CliRunner().invoke(_single(command), ["ann", "--names", "a", "--seed", "2"])
    assert result.exit_code == 0, result.output


def _single(command):
    app = typer.Typer()
    app.command()(command)
    return app


def _commands():
    """Every command of `infoppo` (and its group's), by name."""
    from infoppo_cli.cli.entry import app

    group = typer.main.get_command(app)
    commands = {name: command for name, command in group.commands.items() if name != "data"}
    commands.update({f"data {name}": command for name, command in group.commands["data"].commands.items()})
    return commands


SeedOption = Annotated[int | None, typer.Option("--seed")]


def test_an_option_declared_another_way_is_refused():
    def command(name: NameArgument, seed: SeedOption = None, **options):
        return name, seed

    with pytest.raises(TypeError, match=r"command: declare the option\(s\) \['seed'\] on a settings class"):
        with_settings(Own)(command)


def test_every_option_of_every_command_is_a_declared_field():
    """One way: the command modules declare no ``typer.Option`` of their own (only their positional
    arguments are ``Annotated``), and every option a command takes is a field that ``with_settings`` added."""
    cli = Path(options_module.__file__).parent
    for path in cli.glob("*.py"):
        if path.name != "options.py":
            assert "typer.Option(" not in path.read_text(encoding="utf-8"), path.name
    for name, command in _commands().items():
        for parameter in inspect.signature(command.callback).parameters.values():
            metadata = typing.get_args(parameter.annotation)[1:]
            if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:  # before with_settings' options
                assert any(isinstance(m, typer.models.ArgumentInfo) for m in metadata), (name, parameter.name)


def test_no_command_has_two_options_of_one_name_and_a_shared_option_reads_the_same_everywhere():
    helps: dict[str, set[str]] = {}
    for name, command in _commands().items():
        flags = [flag for param in command.params for flag in (*param.opts, *param.secondary_opts)]
        assert len(flags) == len(set(flags)), name
        for param in command.params:
            helps.setdefault(param.opts[0], set()).add(param.help)
    for shared in ("--dry-run", "--benches-file", "--methods-file", "--workers"):
        assert len(helps[shared]) == 1, (shared, helps[shared])
