"""What infoppo's inputs look like, declared once, and how a bad one is reported.

* Command-line options: a settings dataclass declares each option on its field (:func:`option`: flags,
  help, the default shown, whether it is part of the run's identity, its :class:`Limits`);
  ``infoppo_cli.cli.options`` turns the fields into Typer options, so a command's ``--help``, its
  settings object and its resume check come from one declaration, and :func:`check_options` refuses
  a value out of its limits, or empty text, before any work. A quantity that several commands take
  (a seed, samples per problem) has one :class:`Limits`, here, which each of its options names.
* Data files (presets, methods, benchmarks): a TOML file is read by :func:`read_toml` and checked by
  a pydantic model that refuses unknown keys (:func:`checked`); every problem is one line that names
  the file, the table and the key (:func:`file_problem`).
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from infoppo_cli.errors import TOO_DEEP, UsageError

# --------------------------------------------------------------------------- command-line options


@dataclass(frozen=True)
class Limits:
    """The whole numbers one quantity may take, from ``least`` to ``most`` (none: no upper limit), and
    ``why`` no larger value is meant (said in the refusal)."""

    least: int
    most: int | None = None
    why: str = "that cannot be meant"

    def problem(self, name: str, value: int) -> str | None:
        """Why ``value`` of the option (or key) ``name`` is refused; ``None`` when it is within."""
        if value < self.least:
            return f"{name} must be >= {self.least}, got {value}"
        if self.most is not None and value > self.most:
            return f"{name} must be at most {self.most:,}, got {value:,}: {self.why}"
        return None


AT_LEAST_ONE = Limits(1)
SEEDS = Limits(0, 2**32 - 1, "the training and sampling workers take seeds below 2**32")
"""Every seed: train's ``--seed`` (and ``--set train.seed``), eval's ``--seed``."""
SAMPLES_PER_PROBLEM = Limits(1, 100_000, "pass@k studies draw at most some 10^4 samples per problem")
"""k of Mean@k: eval's ``--samples``, train's ``--eval-samples``, a preset's ``eval_samples``."""


def option(
    default: Any,
    help: str,
    *flags: str,
    identity: bool = False,
    default_text: str | None = None,
    cli_type: type | None = None,
    required: bool = False,
    default_factory: Any = dataclasses.MISSING,
    limits: Limits | None = None,
    metavar: str | None = None,
    callback: Any = None,
) -> Any:
    """A settings field with its command-line declaration (read by ``infoppo_cli.cli.options``).

    ``default``: the field's default (``dataclasses.MISSING``: none, the caller gives it);
    ``flags``: the option's names (default ``--<field-name>``; ``--x/--no-x`` for a switch that can
    be turned off); ``identity``: samples drawn with another value cannot be mixed into the same
    output; ``default_text``: what ``--help`` shows as the default when it is not simply ``default``;
    ``cli_type``: the type on the command line when it differs; ``required``: the command line must
    give it; ``default_factory``: a mutable default (a list); ``limits``: the whole numbers it takes
    (:func:`check_options`); ``metavar``: how ``--help`` names its value; ``callback``: a function of
    the value run before any other option is read (``--version``).
    """
    cli = {
        "help": help,
        "flags": flags,
        "default_text": default_text,
        "cli_type": cli_type,
        "required": required,
        "limits": limits,
        "metavar": metavar,
        "callback": callback,
    }
    metadata = {"cli": cli, "identity": identity}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def declaration(field: dataclasses.Field[Any]) -> dict[str, Any] | None:
    """The command-line declaration of ``field``, or ``None`` for a field that is no option."""
    return field.metadata.get("cli")


def flag_names(field: dataclasses.Field[Any]) -> tuple[str, ...]:
    """``field``'s option names as declared: ``("--lambda", "--lambd")``, ``("--eval-before/--no-eval-
    before",)``; ``--field-name`` when none is."""
    return (declaration(field) or {}).get("flags") or ("--" + field.name.replace("_", "-"),)


def flags_of(field: dataclasses.Field[Any]) -> tuple[str, ...]:
    """Every spelling of ``field``'s option: ``("--lambda", "--lambd")``, ``("--eval-before",
    "--no-eval-before")``."""
    return tuple(spelling for name in flag_names(field) for spelling in name.split("/"))


def flag_of(settings_cls: type, name: str, value: Any = None) -> str:
    """How the option of the field ``name`` is written: its first flag (``--lambda``), ``--no-x`` for a
    switch given as ``False`` (for a message about it)."""
    field = next(field for field in dataclasses.fields(settings_cls) if field.name == name)
    on, _, off = flag_names(field)[0].partition("/")
    return off if value is False and off else on


def option_fields(settings_cls: type) -> dict[str, str]:
    """``{flag: field name}`` for every spelling of every declared option of ``settings_cls``."""
    return {
        flag: field.name
        for field in dataclasses.fields(settings_cls)
        if declaration(field) is not None
        for flag in flags_of(field)
    }


def check_options(settings: Any) -> None:
    """Refuse the first declared option of the settings object ``settings`` whose value is outside its
    :class:`Limits` or its choices (a ``Literal`` ``cli_type``), or is empty text (an option left out
    gets its default; an empty one is no value), as one :class:`UsageError` that names the option."""
    hints = typing.get_type_hints(type(settings))
    for field in dataclasses.fields(settings):
        cli, value = declaration(field), getattr(settings, field.name)
        if cli is None or value is None:
            continue
        flag = flag_names(field)[0].partition("/")[0]
        if unwrap_optional(hints[field.name]) is str and isinstance(value, str) and not value.strip():
            raise UsageError(f"{flag} is empty; give a value, or leave the option out for its default")
        choices = typing.get_args(cli["cli_type"]) if typing.get_origin(cli["cli_type"]) is Literal else ()
        if choices and value not in choices:
            raise UsageError(f"unknown {flag} {value!r}; choose one of: {', '.join(choices)}")
        limits = cli.get("limits")
        problem = limits.problem(flag, value) if limits is not None else None
        if problem:
            raise UsageError(problem)


def identity_fields(settings_cls: type) -> tuple[str, ...]:
    """The fields declared with ``identity=True``, in order."""
    return tuple(f.name for f in dataclasses.fields(settings_cls) if f.metadata.get("identity"))


def benches_file_option() -> Any:
    """``--benches-file``, declared once for every command that reads the user's benchmarks (train's
    ``--eval-bench``, eval's ``--bench``; ``infoppo benches`` and ``report`` take it too)."""
    return option(
        None,
        "A TOML file of your own benchmarks, in the format of evaluation/benchmarks.toml: more names for "
        "eval --bench and train --eval-bench.",
        default_text="",
    )


def dry_run_option() -> Any:
    """``--dry-run``, declared once for every command that can show its plan instead of running it."""
    return option(
        False,
        "Show what would run (the plan, its commands) and every problem a real run would meet; run nothing.",
        "--dry-run",
    )


def methods_file_option() -> Any:
    """``--methods-file``, declared once: train's (more methods to train with) and ``infoppo presets``'
    (more methods to list)."""
    return option(None, "A TOML file of more methods, in presets/methods.toml's schema.", default_text="")


def grading_workers_option() -> Any:
    """``--workers``, declared once for every command that grades (eval's, grade's)."""
    return option(
        None,
        "Grading processes.",
        default_text="one per core",
        limits=Limits(1, 1024, "no machine runs that many grading processes"),
    )


# --------------------------------------------------------------------------- command lines of settings


def _is_switch(hints: Mapping[str, Any], field: dataclasses.Field[Any]) -> bool:
    return unwrap_optional(hints[field.name]) is bool


def _fields_argv(settings_cls: type, values: Mapping[str, Any]) -> list[str]:
    """The command-line options that give ``values`` (field name -> value) to ``settings_cls``, in the
    order its fields are declared: ``--name VALUE`` (a float as ``repr`` writes it, exactly), a list as
    the option repeated, a switch as ``--x`` or ``--no-x``. What the command line would not set is left
    out: ``None``, an empty list, a switch at its default."""
    argv: list[str] = []
    hints = typing.get_type_hints(settings_cls)
    for field in dataclasses.fields(settings_cls):
        value = values.get(field.name)
        if declaration(field) is None or value is None or (isinstance(value, list | tuple) and not value):
            continue
        on, _, off = flag_names(field)[0].partition("/")
        if _is_switch(hints, field):
            if value != field.default:
                argv.append(on if value else off)
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            argv += [on, repr(item) if isinstance(item, float) else str(item)]
    return argv


def command_line(command: Sequence[str], *settings: Any) -> list[str]:
    """``command`` (``("infoppo", "train")``) with the options that give it ``settings``: each a settings
    object (all its fields), or a ``(settings class, {field: value})`` pair (those fields alone). The one
    place a typed request becomes a command line, written from the options' declarations (their first
    flag; ``--x``/``--no-x`` for a switch not at its default) and read back by the command's own parser."""
    argv = list(command)
    for given in settings:
        if isinstance(given, tuple):
            argv += _fields_argv(*given)
        else:
            values = {field.name: getattr(given, field.name) for field in dataclasses.fields(given)}
            argv += _fields_argv(type(given), values)
    return argv


# --------------------------------------------------------------------------- data files


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    """A TOML file as a dict, read by the rules of every input file: a UTF-8 byte-order mark is read
    past, and a missing, unreadable or malformed file (nested too deeply for the parser included) is one
    :class:`UsageError` that starts with ``what`` and the path (``"methods file x.toml: no such file"``)."""
    path = Path(path)
    shown = f"{what} {path}" if what else str(path)
    if not path.is_file():
        raise UsageError(f"{shown}: no such file" if not path.exists() else f"{shown} is not a file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{shown}: not valid TOML ({exc})") from None
    except RecursionError:
        raise UsageError(f"{shown}: not valid TOML ({TOO_DEEP})") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read it ({exc.strerror or exc})") from None


_NO_VALUE = object()


def file_problem(source: str, where: Sequence[Any], problem: str, value: Any = _NO_VALUE) -> UsageError:
    """The one error style of the data files: ``SOURCE: [TABLE] KEY PROBLEM, got VALUE``.

    ``where`` is the path of the key in the file (``("m", "openrlhf", "actor.adam.lr")``): every part
    but the last names the table (none for a top-level key); ``value``, when given, is shown unless
    ``problem`` already says what was found."""
    *tables, key = [str(part) for part in where] or [""]
    table = f"[{'.'.join(tables)}]" if tables else ""
    found = "" if value is _NO_VALUE or "got " in problem else f", got {_shown(value)}"
    return UsageError(f"{source}: " + " ".join(part for part in (table, key, problem) if part) + found)


def _shown(value: Any) -> str:
    """A value as TOML writes it where that differs from Python (``true``, ``inf``)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if isinstance(value, float) else repr(value)


_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "str": "text",
    "bool": "true or false",
    "list": "a list",
    "dict": "a table",
    "model": "a table",
}


def _phrase(error: Mapping[str, Any], known: Sequence[str]) -> tuple[str, Any]:
    """Our words for one pydantic error, and the value to show (or :data:`_NO_VALUE`)."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input", _NO_VALUE)
    if kind == "missing":
        return "is missing", _NO_VALUE
    if kind == "extra_forbidden":
        return f"is not a known key (known: {', '.join(known)})", _NO_VALUE
    if kind == "literal_error":
        return f"must be {str(ctx.get('expected', '')).replace(chr(39), '')}", value
    if kind in ("greater_than_equal", "greater_than"):
        sign = ">=" if kind == "greater_than_equal" else ">"
        limit = ctx.get("ge", ctx.get("gt"))
        noun = "an integer" if isinstance(value, int) else "a number"
        return f"must be {noun} {sign} {limit}", value
    if kind in ("less_than_equal", "less_than"):
        limit = ctx.get("le", ctx.get("lt"))
        return f"must be at most {limit:,}" if kind == "less_than_equal" else f"must be < {limit}", value
    if kind == "string_too_short":
        return "must be a non-empty string", value
    if kind == "value_error":
        return str(ctx.get("error", error.get("msg", ""))), value
    expected = kind.split("_")[0]
    return f"must be {_TYPE_WORDS.get(expected, expected)}", value


_FIRST = {"extra_forbidden": 0, "missing": 1}


def checked(model: Any, document: Any, source: str, where: Sequence[str] = ()) -> Any:
    """``document`` validated by the pydantic ``model``; the first problem is a :class:`UsageError`
    in :func:`file_problem`'s style (``where``: the table ``document`` is in)."""
    from pydantic import ValidationError  # lazy: heavy, kept off start-up

    try:
        return model.model_validate(document)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # an unknown key first (often the misspelling of a missing one), then a missing key
        error = min(errors, key=lambda e: _FIRST.get(e["type"], len(_FIRST)))
        location = [*where, *(part for part in error["loc"] if part != "__root__")]
        problem, value = _phrase(error, _known_keys(model, error["loc"]))
        raise file_problem(source, location, problem, value) from None


def _known_keys(model: Any, loc: Sequence[Any]) -> list[str]:
    """The keys of the table at ``loc[:-1]`` in ``model``'s document, for an unknown-key message."""
    current = model
    for part in loc[:-1]:
        current = _inner(current, part)
    fields = getattr(current, "model_fields", None) or {}
    return [info.alias or name for name, info in fields.items()]


def _inner(kind: Any, part: Any) -> Any:
    """The type of the value at key ``part`` of a value of type ``kind`` (a model or a dict)."""
    fields = getattr(kind, "model_fields", None) or {}
    if "root" in fields and part not in fields:  # a RootModel: its root holds the keys
        kind, fields = unwrap_optional(fields["root"].annotation), {}
    by_key = {info.alias or name: info for name, info in fields.items()}
    if part in by_key:
        return unwrap_optional(by_key[part].annotation)
    if typing.get_origin(kind) in (dict, Mapping):
        return unwrap_optional(typing.get_args(kind)[1])
    return kind


def unwrap_optional(annotation: Any) -> Any:
    """``X | None`` and ``Annotated[X, ...]`` as ``X``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        annotation = members[0] if len(members) == 1 else annotation
    return annotation
