"""One style for every ``--help``, through Click's public parameter attributes.

Typer shows a default as ``[default: x]`` after an option's help; infoppo's help texts say a default
that is "not given" in their own words, as ``(default: x)``. So every shown default is written into the
help text in that style (and Typer's own display of it switched off), and a flag (``--strict``,
``--help``) shows no type column, since it takes no value (Typer would show ``<bool>``).
:class:`HouseStyleGroup` applies this to every command it hands out, and to its own options.
"""

from __future__ import annotations

import enum
import inspect
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperGroup


def _opt_name(opt: str) -> str:
    """``--eval-before`` -> ``eval-before``: an option's name without its prefix."""
    return opt.lstrip(opt[:1]) if opt[:1] and not opt[:1].isalnum() else opt


def _default_text(param: Any, default: Any) -> str:
    """How a default value reads in the help (empty: not shown), as Typer writes it."""
    if isinstance(default, (list, tuple)):
        return ", ".join(part for part in (_default_text(param, d) for d in default) if part)
    if isinstance(default, enum.Enum):
        return str(default.value)
    if inspect.isfunction(default):
        return "dynamic"
    if getattr(param, "is_bool_flag", False):
        if param.secondary_opts:  # --x/--no-x: the one that is on
            return _opt_name(param.opts[0] if default else param.secondary_opts[0])
        return str(default) if default else ""
    return str(default)


def _shown_default(param: Any, ctx: typer.Context) -> str:
    if isinstance(param.show_default, str):
        return param.show_default
    if not (param.show_default or ctx.show_default):
        return ""
    resilient, ctx.resilient_parsing = ctx.resilient_parsing, True  # no type casting of the default
    try:
        default = param.get_default(ctx, call=False)
    finally:
        ctx.resilient_parsing = resilient
    return "" if default is None else _default_text(param, default)


def restyle(param: Any, ctx: typer.Context) -> None:
    """Write ``param``'s shown default into its help, once; a flag gets an empty type column."""
    if getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""  # Typer's type column shows a metavar as given
    if param.show_default is False or not hasattr(param, "help"):
        return
    shown = _shown_default(param, ctx)
    param.show_default = False
    if shown:
        note = f"(default: {escape(shown)})"  # help texts are Rich markup; a default is plain text
        param.help = f"{param.help} {note}" if param.help else note


def restyle_command(command: Any, ctx: typer.Context) -> None:
    """Restyle a command's options and help option, and a group's commands, all the way down."""
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        restyle(param, ctx)
    for sub in getattr(command, "commands", {}).values():
        restyle_command(sub, ctx)


class HouseStyleGroup(TyperGroup):
    """Typer's group, whose ``--help`` and whose commands' ``--help`` are in infoppo's style."""

    def get_params(self, ctx: typer.Context) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            restyle(param, ctx)
        return params

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            restyle_command(command, ctx)
        return command
