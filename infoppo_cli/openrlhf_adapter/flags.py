"""OpenRLHF 0.11.2's command-line flags: rendering, ``--set`` parsing, and validation by its own parser.

``openrlhf.cli.train_ppo_ray`` builds its ``argparse`` parser inline under ``if __name__ == "__main__"``
and imports vLLM at module level. To validate flags on any machine (a laptop has no vLLM), the
statements of that block up to ``parse_args()`` are executed on their own: the parser is exactly
OpenRLHF's, read from the installed file, and nothing else of the module runs.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import importlib.util
import math
from functools import cache
from typing import Any

from infoppo_cli import resources
from infoppo_cli.errors import UsageError

ENTRY_MODULE = "openrlhf.cli.train_ppo_ray"


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _calls_parse_args(node: ast.stmt) -> bool:
    return any(
        isinstance(sub, ast.Attribute) and sub.attr in ("parse_args", "parse_known_args")
        for sub in ast.walk(node)
    )


@cache
def openrlhf_parser() -> argparse.ArgumentParser:
    """OpenRLHF's own ``train_ppo_ray`` argument parser (see the module docstring)."""
    spec = importlib.util.find_spec(ENTRY_MODULE)
    if spec is None or spec.origin is None:
        raise UsageError(f"cannot find {ENTRY_MODULE}: is openrlhf installed?")
    with open(spec.origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=spec.origin)
    guard = next(node for node in tree.body if _is_main_guard(node))
    statements = []
    for node in guard.body:
        if _calls_parse_args(node):
            break
        statements.append(node)
    namespace: dict[str, Any] = {"argparse": argparse, "datetime": datetime.datetime}
    exec(compile(ast.Module(body=statements, type_ignores=[]), spec.origin, "exec"), namespace)
    return namespace["parser"]


def _actions_by_flag() -> dict[str, argparse.Action]:
    return {opt: action for action in openrlhf_parser()._actions for opt in action.option_strings}


def render(flags: dict[str, Any]) -> list[str]:
    """Command-line tokens for ``flags`` (dotted name → value), one flag after another.

    ``True`` is a bare switch, ``False`` and ``None`` are left out, lists give several values.
    """
    argv: list[str] = []
    for name, value in flags.items():
        if value is None or value is False:
            continue
        argv.append(f"--{name}")
        if value is True:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        argv.extend(_token(v) for v in values)
    return argv


def _token(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def parse_set_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` from ``--set`` as (dotted flag name, value), checked against OpenRLHF's flags.

    A switch takes true/false; a multi-value flag takes values separated by commas or spaces. The
    value stays text, as given, once OpenRLHF's parser is known to convert it (:func:`value_problem`).
    """
    key, sep, raw = text.partition("=")
    key = key.strip().removeprefix("--")
    if not sep or not key:
        raise UsageError(f"--set expects KEY=VALUE (e.g. rollout.n_samples_per_prompt=8), got {text!r}")
    action = _actions_by_flag().get(f"--{key}")
    if action is None:
        raise UsageError(f"--set {key}: OpenRLHF {_version()} has no flag --{key}{_suggestion(key)}")
    raw = raw.strip()
    if action.nargs == 0:
        lowered = raw.lower()
        if lowered not in ("true", "false", "1", "0", "yes", "no"):
            raise UsageError(f"--set {key} is a switch: give true or false, got {raw!r}")
        return key, lowered in ("true", "1", "yes")
    value: Any = raw
    if action.nargs in ("+", "*") or isinstance(action.nargs, int):
        value = [part for part in raw.replace(",", " ").split() if part]
    problem = value_problem(key, value)
    if problem:
        raise UsageError(f"--set {key}={_shown_value(key, raw)}: {key} {problem}")
    return key, value


def parse_set_options(texts: list[str]) -> dict[str, Any]:
    """Every ``--set`` as one dict; a flag given twice with different values is refused (no silent
    winner), the same value twice is kept once."""
    parsed: dict[str, Any] = {}
    for text in texts:
        key, value = parse_set_option(text)
        if key in parsed and parsed[key] != value:
            first, second = _shown_value(key, parsed[key]), _shown_value(key, value)
            raise UsageError(f"--set {key} is given twice ({first} and {second}); give it once")
        parsed[key] = value
    return parsed


def _shown_value(key: str, value: Any) -> str:
    if key in SECRET_FLAGS:
        return REDACTED
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


_KINDS = {int: "an integer", float: "a number"}


def value_problem(key: str, value: Any) -> str | None:
    """Why OpenRLHF's ``--KEY`` cannot take ``value`` (a TOML value, or the text of a ``--set``), as
    its parser would convert it; ``None`` when it can. Non-finite numbers are refused, except for a
    flag whose own default is one (``ckpt.max_mem = inf``: no limit)."""
    action = _actions_by_flag().get(f"--{key}")
    if action is None:
        return f"is not a flag of OpenRLHF {_version()}{_suggestion(key)}"
    if action.nargs == 0:
        return None if isinstance(value, bool) else "is a switch: give true or false"
    several = action.nargs in ("+", "*") or isinstance(action.nargs, int)
    values = list(value) if isinstance(value, list | tuple) else [value]
    if not several and len(values) != 1:
        return "takes one value"
    if isinstance(action.nargs, int) and len(values) != action.nargs:
        return f"takes {action.nargs} values, got {len(values)}"
    if action.nargs == "+" and not values:
        return "takes at least one value"
    for item in values:
        problem = _item_problem(action, item)
        if problem:
            return problem
    return None


def _item_problem(action: argparse.Action, item: Any) -> str | None:
    convert = action.type if callable(action.type) else str
    kind = _KINDS.get(convert, "text")
    if isinstance(item, bool | list | tuple | dict):
        return f"takes {kind}"
    if convert is int and isinstance(item, float):
        return "takes an integer"
    if convert in (int, float) and not isinstance(item, int | float | str):
        return f"takes {kind}"
    try:
        converted = convert(item) if convert in (int, float) else str(item)
    except (TypeError, ValueError):
        return f"takes {kind}"
    default_finite = not isinstance(action.default, float) or math.isfinite(action.default)
    if isinstance(converted, float) and not math.isfinite(converted) and default_finite:
        return "must be a finite number"
    if action.choices is not None and converted not in action.choices:
        return f"must be one of {', '.join(map(str, action.choices))}"
    return None


def _suggestion(key: str) -> str:
    close = difflib.get_close_matches(f"--{key}", list(_actions_by_flag()), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _version() -> str:
    return resources.installed_version("openrlhf") or "(not installed)"


def validate(argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` with OpenRLHF's parser; any error becomes a one-line :class:`UsageError`."""
    parser = openrlhf_parser()

    def fail(message: str) -> None:
        raise UsageError(f"OpenRLHF rejects the flags: {message}")

    original_error = parser.error
    parser.error = fail  # type: ignore[method-assign]
    try:
        return parser.parse_args(argv)
    finally:
        parser.error = original_error  # type: ignore[method-assign]


SECRET_FLAGS = {"logger.wandb.key": "WANDB_API_KEY"}
"""OpenRLHF flags that carry a secret -> the environment variable that carries it instead."""
REDACTED = "<redacted>"


def env_reference(variable: str) -> str:
    """What a secret flag holds on the command line: a pointer to the environment, never the value.

    OpenRLHF turns wandb on when ``logger.wandb.key`` is non-empty and calls ``wandb.login`` only
    when wandb has no key yet; wandb reads ``WANDB_API_KEY`` itself, so the pointer is never used
    as a key and the secret stays out of the command, ``manifest.json`` and OpenRLHF's printed args.
    """
    return f"env:{variable}"


def secrets_to_environment(flags: dict[str, Any], environ: dict[str, str]) -> dict[str, str]:
    """Replace each secret flag's value in ``flags`` by :func:`env_reference` and return the
    environment the launched process needs; a secret already in ``environ`` switches its flag on."""
    moved: dict[str, str] = {}
    for flag, variable in SECRET_FLAGS.items():
        value = flags.get(flag)
        if value and value not in (env_reference(variable), REDACTED):
            moved[variable] = str(value)
        if value or environ.get(variable):
            flags[flag] = env_reference(variable)
    return moved


def redact_argv(argv: list[str]) -> list[str]:
    """``argv`` (or ``--set`` values) with the value of every secret flag replaced by ``<redacted>``:
    ``--set KEY=V``, ``--set=KEY=V``, ``KEY=V`` and ``--KEY V`` forms."""
    return _split_secrets(argv)[0]


def secrets_in_argv(argv: list[str]) -> dict[str, str]:
    """The secrets given in ``argv`` (forms as :func:`redact_argv`), by environment variable."""
    return _split_secrets(argv)[1]


def _split_secrets(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    out: list[str] = []
    found: dict[str, str] = {}
    pending: str | None = None  # the secret flag whose value is the next token
    for token in argv:
        prefix = "--set=" if token.startswith("--set=") else ""
        name, sep, value = token.removeprefix(prefix).partition("=")
        name = name.removeprefix("--")
        if pending is not None:
            found[SECRET_FLAGS[pending]] = token
            out.append(REDACTED)
            pending = None
        elif sep and name in SECRET_FLAGS:
            found[SECRET_FLAGS[name]] = value
            out.append(f"{token[: len(token) - len(value)]}{REDACTED}")
        else:
            out.append(token)
            pending = name if not sep and name in SECRET_FLAGS else None
    return out, {variable: value for variable, value in found.items() if value and value != REDACTED}
