"""Command-line options declared once, on the settings they set.

:func:`settings_options` turns a settings dataclass whose fields were declared with their command-line
metadata (``infoppo_cli.schema.option``: flags, help, default shown, identity) into Typer options, so
that the settings object, the ``--help`` text and the resume check come from one declaration. Every
such option defaults to ``None`` ("not given"), so the library can tell a given value from a default
(``--resume`` keeps saved values that were not given again; a sweep holds a value unless it is passed).
:func:`given_fields` keeps those that were given.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import typer

from infoppo_cli.schema import declaration, flag_names, unwrap_optional


def unset_option(*flags: str, help: str) -> Any:
    """An option whose default is ``None`` ("not given"; the help says what that means)."""
    return typer.Option(None, *flags, help=help, show_default=False)


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


def settings_options(
    settings_cls: type, exclude: Sequence[str] = (), prefix: str = ""
) -> list[inspect.Parameter]:
    """A keyword parameter with a Typer option for every declared field of ``settings_cls`` (named
    ``prefix`` + the field's name: two classes with a field of one name can share a command)."""
    hints = typing.get_type_hints(settings_cls, include_extras=True)
    parameters = []
    for field in dataclasses.fields(settings_cls):
        cli = declaration(field)
        if cli is None or field.name in exclude:
            continue
        flags = flag_names(field)
        cli_type = cli.get("cli_type") or unwrap_optional(hints[field.name])
        default = ... if cli.get("required") else None
        info = typer.Option(default, *flags, help=_help(field, cli), show_default=False)
        annotation = cli_type if cli.get("required") else cli_type | None
        parameters.append(
            inspect.Parameter(
                prefix + field.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation
            )
        )
    return parameters


def option_parameter(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    """A keyword parameter from an ``Annotated[type, typer.Option(...)]`` of a command's own."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def with_parameters(
    parameters: Sequence[inspect.Parameter],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a ``def command(**options)`` function the signature Typer reads its options from."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        function.__signature__ = inspect.Signature(list(parameters))  # type: ignore[attr-defined]
        return function

    return decorate


def given_fields(options: Mapping[str, Any], settings_cls: type, prefix: str = "") -> dict[str, Any]:
    """The options of ``settings_cls``'s fields that were given (not ``None``), by field name (the
    options' names are ``prefix`` + the field's, as :func:`settings_options` named them)."""
    names = {field.name for field in dataclasses.fields(settings_cls)}
    chosen = {name.removeprefix(prefix): value for name, value in options.items() if name.startswith(prefix)}
    return {name: value for name, value in chosen.items() if name in names and value is not None}


def given_flag(settings_cls: type, name: str, value: Any) -> str:
    """How an option given as ``value`` is written: ``--no-eval-before`` for a switch turned off,
    else its first flag (for a message about it)."""
    field = next(field for field in dataclasses.fields(settings_cls) if field.name == name)
    on, _, off = flag_names(field)[0].partition("/")
    return off if value is False and off else on
