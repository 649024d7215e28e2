"""Command-line options: one idiom, ``Annotated`` parameters.

Every option of every command is a parameter of the command's function, annotated with
``Annotated[type, typer.Option(...)]``, its default (when it has one) after the ``=``:

* an option several commands take is declared once, here (:data:`DryRunOption`,
  :data:`BenchesFileOption`, ...), with the same name and meaning on every command;
* a command's own options are declared the same way in its module;
* the options of a settings object (``TrainRequest``, ``EvalSettings``, ...) are declared on its fields
  (``infoppo_cli.schema.option``: flags, help, default shown, identity), so that the settings object,
  the ``--help`` text, the resume check and a run's command line come from one declaration;
  :func:`with_settings` adds them to a command as ``Annotated`` parameters, which reach it in
  ``**options``.

Every settings option defaults to ``None`` ("not given"), so the library can tell a given value from a
default (``--resume`` keeps saved values that were not given again; a sweep holds a value unless it is
passed). :func:`given_fields` keeps those that were given.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from infoppo_cli.eval.settings import EvalSettings
from infoppo_cli.schema import declaration, flag_names, unwrap_optional
from infoppo_cli.train.request import TrainRequest


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def _help(field: dataclasses.Field[Any], cli: Mapping[str, Any]) -> str:
    shown = cli.get("default_text")
    default = _default(field)
    if shown is None and default is not None and default is not False and default not in ([], ()):
        shown = str(default)
    return cli["help"] + (f" (default: {shown})" if shown else "")


def _field_annotation(
    settings_cls: type, field: dataclasses.Field[Any], hidden: bool = False, panel: str | None = None
) -> Any:
    """``Annotated[type, typer.Option(...)]`` of a declared field: its flags, its help with the default
    it shows, the type the command line gives it (``| None`` unless it is required)."""
    cli = declaration(field) or {}
    hints = typing.get_type_hints(settings_cls, include_extras=True)
    cli_type = cli.get("cli_type") or unwrap_optional(hints[field.name])
    info = typer.Option(
        *flag_names(field), help=_help(field, cli), show_default=False, hidden=hidden, rich_help_panel=panel
    )
    return Annotated[cli_type if cli.get("required") else cli_type | None, info]


def option_of(settings_cls: type, name: str) -> Any:
    """The ``Annotated`` option of the field ``name`` of ``settings_cls``, for a command that takes this
    one option of a settings object (``infoppo presets --methods-file``)."""
    field = next(field for field in dataclasses.fields(settings_cls) if field.name == name)
    return _field_annotation(settings_cls, field)


# --------------------------------------------------------------------------- options of several commands

DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Show what would run (the plan, its commands) and every problem a real run would meet; run "
        "nothing.",
    ),
]
BenchesFileOption = option_of(EvalSettings, "benches_file")
"""``--benches-file``: declared once (``schema.benches_file_option``), on train's, eval's, benches' and
report's command line."""
MethodsFileOption = option_of(TrainRequest, "methods_file")
"""``--methods-file``: train's, and ``infoppo presets``' to list them."""


def output_option(help: str) -> Any:
    """``--out``/``-o``, where a command writes what it makes; ``help`` says what and its default."""
    return Annotated[Path | None, typer.Option("--out", "-o", help=help, show_default=False)]


# --------------------------------------------------------------------------- options of settings objects


@dataclasses.dataclass(frozen=True)
class Settings:
    """The options of one settings class's declared fields, as a command takes them: each parameter
    named ``prefix`` + the field's name (two classes with a field of one name can share a command),
    ``exclude``'d fields left out, ``hidden`` ones taken but not listed in ``--help``, all in the help
    ``panel`` when one is named."""

    settings_cls: type
    prefix: str = ""
    exclude: Sequence[str] = ()
    hidden: Sequence[str] = ()
    panel: str | None = None


def settings_options(
    settings_cls: type | Settings, exclude: Sequence[str] = (), prefix: str = ""
) -> list[inspect.Parameter]:
    """A keyword parameter with an ``Annotated`` option for every declared field of a settings class
    (see :class:`Settings`)."""
    chosen = settings_cls if isinstance(settings_cls, Settings) else Settings(settings_cls, prefix, exclude)
    parameters = []
    for field in dataclasses.fields(chosen.settings_cls):
        cli = declaration(field)
        if cli is None or field.name in chosen.exclude:
            continue
        hidden = field.name in chosen.hidden
        annotation = _field_annotation(chosen.settings_cls, field, hidden, chosen.panel)
        default = inspect.Parameter.empty if cli.get("required") else None
        name = chosen.prefix + field.name
        parameters.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        )
    return parameters


def _is_argument(parameter: inspect.Parameter) -> bool:
    metadata = getattr(parameter.annotation, "__metadata__", ())
    return parameter.annotation is typer.Context or any(
        isinstance(m, typer.models.ArgumentInfo) for m in metadata
    )


def with_settings(*settings: type | Settings) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the options of ``settings`` (classes, or :class:`Settings`) to a command whose own arguments
    and options are its ``Annotated`` parameters; the added ones reach it in ``**options``. ``--help``
    lists the command's arguments, then the settings' options, then its own."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(function, include_extras=True)
        own = [
            parameter.replace(annotation=hints.get(parameter.name, parameter.annotation))
            for parameter in inspect.signature(function).parameters.values()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        arguments = [parameter for parameter in own if _is_argument(parameter)]
        options = [
            parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for parameter in own
            if not _is_argument(parameter)
        ]
        added = [parameter for group in settings for parameter in settings_options(group)]
        function.__signature__ = inspect.Signature([*arguments, *added, *options])  # type: ignore[attr-defined]
        return function

    return decorate


def given_fields(options: Mapping[str, Any], settings_cls: type, prefix: str = "") -> dict[str, Any]:
    """The options of ``settings_cls``'s fields that were given (not ``None``), by field name (the
    options' names are ``prefix`` + the field's, as :func:`settings_options` named them)."""
    names = {field.name for field in dataclasses.fields(settings_cls)}
    chosen = {name.removeprefix(prefix): value for name, value in options.items() if name.startswith(prefix)}
    return {name: value for name, value in chosen.items() if name in names and value is not None}
