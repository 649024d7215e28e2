"""A command line as it is kept in a record (a run's manifest, its model card): shell-quoted, with
anything that looks like a secret replaced by ``<redacted>``.

What looks like a secret: the value of an option or ``KEY=VALUE`` whose name has a word such as key,
token, secret or password (``--set logger.wandb.key=...``, ``--hf-token T``, ``WANDB_API_KEY=...``),
and any token shaped like a credential (a wandb key's 40 hex digits, ``hf_...``, ``sk-...``,
``ghp_...``), wherever it stands.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

REDACTED = "<redacted>"
SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials"}
)
CREDENTIAL = re.compile(
    r"^(?:[0-9a-f]{40}|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|wandb_v\d+_[A-Za-z0-9_]{20,}|xox[abp]-[A-Za-z0-9-]{10,})$"
)
_WORD = re.compile(r"[A-Za-z0-9]+")


def secret_name(name: str) -> bool:
    """Whether an option or variable name (``--hf-token``, ``logger.wandb.key``, ``WANDB_API_KEY``)
    names a secret."""
    return any(word.lower() in SECRET_WORDS for word in _WORD.findall(name))


def _redacted_value(value: str) -> str:
    return REDACTED if CREDENTIAL.match(value) else value


def redact_command(argv: Sequence[str]) -> list[str]:
    """``argv`` with every secret (see the module) replaced by ``<redacted>``."""
    out: list[str] = []
    secret_follows = False
    for token in argv:
        if secret_follows and not token.startswith("-"):
            out.append(REDACTED)
            secret_follows = False
            continue
        secret_follows = False
        name, sep, value = token.partition("=")
        if sep and name.startswith("--set"):  # --set=KEY=VALUE
            inner, inner_sep, inner_value = value.partition("=")
            if inner_sep and (secret_name(inner) or CREDENTIAL.match(inner_value)):
                out.append(f"{name}={inner}={REDACTED}")
                continue
        if sep and secret_name(name):
            out.append(f"{name}={REDACTED}")
        elif sep:
            out.append(f"{name}={_redacted_value(value)}")
        else:
            out.append(_redacted_value(token))
            secret_follows = token.startswith("-") and secret_name(token)
    return out


def command_text(argv: Sequence[str]) -> str:
    """``argv`` as one shell-quoted line, secrets redacted."""
    return shlex.join(redact_command(argv))
