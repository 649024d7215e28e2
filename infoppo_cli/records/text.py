"""Text and JSON that every reader accepts.

JSON may carry a lone UTF-16 surrogate (``"\\ud800"``) that Python decodes into a ``str`` no UTF-8
encoder will write; such text is repaired where it is read (the surrogate becomes U+FFFD, the
replacement character), so a graded batch is never lost to an encoding error. Python's ``json`` writes
``NaN`` and ``Infinity``, which strict parsers reject; everything evaluation writes goes through
:func:`dumps`, which writes ``null`` for a non-finite number and refuses anything else non-standard.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from infoppo_cli.errors import TOO_DEEP

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (``json.loads`` pairs the valid ones)."""
    return _LONE_SURROGATE.sub(REPLACEMENT, text) if _LONE_SURROGATE.search(text) else text


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as ``None`` and strings made valid (dict keys included)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {
            json_safe(key) if isinstance(key, str) else key: json_safe(item) for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


class NestedTooDeeply(json.JSONDecodeError):
    """A JSON document nested too deeply for the parser: malformed text like any other."""

    def __init__(self) -> None:
        super().__init__(TOO_DEEP, "", 0)
        self.args = (TOO_DEEP,)  # the message without a position: the parser gave up at no one place


def loads(text: str | bytes) -> Any:
    """The JSON document ``text``; malformed text, deep nesting included (:class:`NestedTooDeeply`),
    is a ``json.JSONDecodeError``, a ``ValueError``, so each reader's one error path names the file."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestedTooDeeply from None


def dumps(value: Any, **options: Any) -> str:
    """Standard JSON of ``value`` (see :func:`json_safe`); ``options`` go to ``json.dumps``."""
    return json.dumps(json_safe(value), allow_nan=False, **options)


def json_file_text(value: Any) -> str:
    """The text of a JSON file holding ``value``: indented standard JSON (see :func:`json_safe`) and a
    final newline, for ``atomic.atomic_write_text`` to write."""
    return dumps(value, indent=2, default=str) + "\n"
