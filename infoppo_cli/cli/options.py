"""Command-line options declared once.

Two kinds live here:

* Options several commands share (``--seed``, ``--set``, ``--address``, ``--out``, ``--dry-run``,
  ``--force``, ``--json``), as ``Annotated`` types: ``def cmd(seed: SeedOption = None)``.
* :func:`settings_options`, which turns a settings dataclass whose fields were declared with their
  command-line metadata (``infoppo_cli.eval.settings.option``: flags, help, default shown, identity)
  into Typer options, so that the settings object, the ``--help`` text and the resume check come
  from one declaration. Every such option defaults to ``None`` ("not given"), so the library can tell
  a given value from a default (``--resume`` keeps saved values that were not given again).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

SeedOption = Annotated[
    int | None, typer.Option("--seed", help="Random seed of the run.", show_default=False, min=0)
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override one OpenRLHF flag, KEY=VALUE with OpenRLHF's dotted name (repeatable).",
        show_default=False,
    ),
]
AddressOption = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="Ray cluster address (e.g. ray://head:10001); default: an embedded local Ray.",
        show_default=False,
    ),
]
OutOption = Annotated[Path | None, typer.Option("--out", "-o", help="Output path.", show_default=False)]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Show what would run, and stop.")]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace existing output.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def unset_option(*flags: str, help: str) -> Any:
    """An option whose default is ``None`` ("not given"; the help says what that means)."""
    return typer.Option(None, *flags, help=help, show_default=False)


def _declaration(field: dataclasses.Field[Any]) -> dict[str, Any] | None:
    return field.metadata.get("cli")


def _without_none(annotation: Any) -> Any:
    """``int | None`` -> ``int`` (the option itself is made optional)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _help(field: dataclasses.Field[Any], declaration: dict[str, Any]) -> str:
    shown = declaration.get("default_text")
    if shown is None and field.default is not dataclasses.MISSING and field.default is not None:
        shown = str(field.default)
    return declaration["help"] + (f" (default: {shown})" if shown else "")


def settings_options(settings_cls: type, exclude: Sequence[str] = ()) -> list[inspect.Parameter]:
    """A keyword parameter with a Typer option for every declared field of ``settings_cls``."""
    hints = typing.get_type_hints(settings_cls)
    parameters = []
    for field in dataclasses.fields(settings_cls):
        declaration = _declaration(field)
        if declaration is None or field.name in exclude:
            continue
        flags = declaration["flags"] or ("--" + field.name.replace("_", "-"),)
        cli_type = declaration.get("cli_type") or _without_none(hints[field.name])
        info = typer.Option(None, *flags, help=_help(field, declaration), show_default=False)
        parameters.append(
            inspect.Parameter(
                field.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=cli_type | None
            )
        )
    return parameters


def option_parameter(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    """A keyword parameter from one of the shared ``Annotated`` options above."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def with_parameters(
    parameters: Sequence[inspect.Parameter],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a ``def command(**options)`` function the signature Typer reads its options from."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        function.__signature__ = inspect.Signature(list(parameters))  # type: ignore[attr-defined]
        return function

    return decorate


def given(options: dict[str, Any], settings_cls: type) -> dict[str, Any]:
    """The subset of parsed ``options`` that are fields of ``settings_cls`` (``None``: not given)."""
    names = {field.name for field in dataclasses.fields(settings_cls)}
    return {name: value for name, value in options.items() if name in names}
