"""Command-line options, declared one way: on the fields of settings dataclasses.

Every option of every command is a field declared with ``infoppo_cli.schema.option`` (flags, help, the
default shown, identity, limits) on a settings dataclass: a library one (``TrainRequest``,
``EvalSettings``, ...), so that the settings object, the ``--help`` text, the resume check and a run's
command line come from one declaration, or the command's own (``--dry-run``, ``--out``, ...) beside it
in its module. :func:`with_settings` adds the options of the classes a command names to its signature,
after its positional arguments (the only ``Annotated`` parameters); they reach it in ``**options``. An
option several commands take is one field factory in ``schema`` (``dry_run_option``,
``benches_file_option``, ...), the same name and meaning on every command.

Every option reaches the command as ``None`` when not given, so the library can tell a given value from
a default (``--resume`` keeps saved values that were not given again; a sweep holds a value unless it is
passed): :func:`given_fields` keeps those that were given, :func:`settings_of` builds the settings
object with the declared defaults for the rest.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import typer

from infoppo_cli.schema import declaration, flag_names, unwrap_optional


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
        *flag_names(field),
        help=_help(field, cli),
        show_default=False,
        hidden=hidden,
        rich_help_panel=panel,
        metavar=cli.get("metavar"),
        callback=cli.get("callback"),
        is_eager=cli.get("callback") is not None,
    )
    return Annotated[cli_type if cli.get("required") else cli_type | None, info]


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
    """Add the options of ``settings`` (classes, or :class:`Settings`) to a command whose other
    parameters are its positional arguments (``Annotated`` with ``typer.Argument``); the options reach it
    in ``**options``. ``--help`` lists the arguments, then the options in the order of ``settings``."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(function, include_extras=True)
        arguments = [
            parameter.replace(annotation=hints.get(parameter.name, parameter.annotation))
            for parameter in inspect.signature(function).parameters.values()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        stray = [parameter.name for parameter in arguments if not _is_argument(parameter)]
        if stray:
            raise TypeError(f"{function.__name__}: declare the option(s) {stray} on a settings class")
        added = [parameter for group in settings for parameter in settings_options(group)]
        function.__signature__ = inspect.Signature([*arguments, *added])  # type: ignore[attr-defined]
        return function

    return decorate


def settings_of(options: Mapping[str, Any], settings_cls: type, prefix: str = "") -> Any:
    """``settings_cls`` with the options given (:func:`given_fields`), its declared defaults for the rest."""
    return settings_cls(**given_fields(options, settings_cls, prefix))


def given_fields(options: Mapping[str, Any], settings_cls: type, prefix: str = "") -> dict[str, Any]:
    """The options of ``settings_cls``'s fields that were given (not ``None``), by field name (the
    options' names are ``prefix`` + the field's, as :func:`settings_options` named them)."""
    names = {field.name for field in dataclasses.fields(settings_cls)}
    chosen = {name.removeprefix(prefix): value for name, value in options.items() if name.startswith(prefix)}
    return {name: value for name, value in chosen.items() if name in names and value is not None}
