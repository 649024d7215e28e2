"""The Hugging Face Hub, reached quickly or not at all: one mechanism for every command that loads a
model or a dataset from it (``data prep``, ``eval``, ``train``, ``inspect``).

Without network, ``huggingface_hub`` retries every request five times with back-off (1 + 2 + 4 + 8 + 8
seconds) and logs a line per retry, so each file a command asks for costs about 25 seconds of noise
before the error. Before the first Hub access of a command, :func:`hub_unavailable` asks the endpoint
once, with a short timeout. When it does not answer, the process switches the Hub libraries to their
offline mode (the local cache only: no request, no retry): a cached model or dataset still loads, and a
missing one fails at once, reported by :func:`hub_error` as one line that says how to go on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from huggingface_hub import constants
from safetensors import SafetensorError

from infoppo_cli.errors import UsageError

PROBE_TIMEOUT_S = 3.0
"""How long the one reachability probe may take (connect and answer)."""

OFFLINE_ADVICE = (
    "copies downloaded elsewhere (`hf download ID`) are found in the cache (HF_HOME); "
    "HF_HUB_OFFLINE=1 uses that cache without trying the network"
)

_unreachable: str | None = None
"""Why this process switched itself to offline mode; ``""`` when the probe found the Hub answering,
``None`` before the probe."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def probe(endpoint: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """``None`` when ``endpoint`` answers an HTTP request (any status), else the reason it did not."""
    import httpx  # lazy: heavy, kept off start-up

    try:
        httpx.head(endpoint, timeout=timeout)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {first_line(exc)}"
    return None


def go_offline() -> None:
    """Put this process (and the processes it starts) in the Hub libraries' offline mode."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    constants.HF_HUB_OFFLINE = True
    datasets_config = sys.modules.get("datasets.config")
    if datasets_config is not None:  # read once at its import, so imported already means set it here
        datasets_config.HF_HUB_OFFLINE = True


def hub_unavailable() -> str | None:
    """``None`` when the Hub can be used; else why not, having switched to the cache when it is down.

    The endpoint (``HF_ENDPOINT``) is probed once per process; offline mode set by the user
    (``HF_HUB_OFFLINE=1``) is respected without a probe.
    """
    global _unreachable
    if _unreachable is None and not constants.is_offline_mode():
        failure = probe(constants.ENDPOINT)
        _unreachable = "" if failure is None else f"{constants.ENDPOINT} does not answer: {failure}"
        if failure is not None:
            go_offline()
    return _unreachable or _offline_mode_reason()


def is_local(reference: str) -> bool:
    """Whether a model or dataset reference names something on this machine rather than a Hub id."""
    return reference.startswith(("/", ".", "~")) or Path(reference).expanduser().exists()


def cached_model(model: str) -> bool:
    """Whether the Hub model ``model`` has its ``config.json`` in the local cache."""
    from huggingface_hub import try_to_load_from_cache  # lazy: heavy, kept off start-up

    try:
        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except Exception:  # an id the cache layout cannot hold is not cached
        return False


def hub_error(what: str, exc: BaseException, how: str) -> UsageError:
    """The one line for a failed Hub load of ``what``: the reason, then ``how`` to go on.

    When the Hub is unavailable the library's own message (about the cache, a connection) is replaced
    by that fact, since the cure is the same whatever the library said.
    """
    reason = _unreachable or _offline_mode_reason()
    if reason is not None:
        return UsageError(
            f"cannot load {what}: not in the local Hugging Face cache, and the Hub cannot be used "
            f"({reason}); {how}; {OFFLINE_ADVICE}"
        )
    return UsageError(f"cannot load {what}: {first_line(exc)}; {how}")


HUB_MODEL_ADVICE = "pass --model DIR, a downloaded copy of the model"


@contextmanager
def loading(
    what: str,
    name: str,
    errors: tuple[type[BaseException], ...] = (OSError, ValueError),
    how: str = HUB_MODEL_ADVICE,
) -> Iterator[None]:
    """Loading ``what`` ("the model org/m") from ``name``, a local path or a Hub id: a Hub id fails at
    once when the Hub cannot be used (no retries); any of ``errors`` becomes one :class:`UsageError`
    line, with ``how`` to go on for a Hub id."""
    if not is_local(name):
        hub_unavailable()
    try:
        yield
    except SafetensorError as exc:  # a truncated or corrupt weights file: name it
        corrupt = f"{_weights_file(name)} is corrupt ({first_line(exc)})"
        raise UsageError(f"cannot load {what}: {corrupt}") from None
    except errors as exc:
        if not is_local(name):
            raise hub_error(what, exc, how) from None
        raise UsageError(f"cannot load {what}: {first_line(exc)}") from None


def _weights_file(name: str) -> str:
    """The weights file(s) of a local model directory, for a message; the model's name otherwise."""
    path = Path(name).expanduser()
    files = sorted(str(p) for p in path.glob("*.safetensors")) if path.is_dir() else []
    return files[0] if len(files) == 1 else (f"a weights file of {name}" if files else name)


def _offline_mode_reason() -> str | None:
    return "HF_HUB_OFFLINE is set" if constants.is_offline_mode() else None


def check_hub_model(model: str, how: str) -> None:
    """Refuse in seconds a Hub model id that can be neither downloaded (the Hub does not answer) nor
    found in the cache. Local paths, a reachable Hub and offline mode set by the user pass unchecked
    (in the last case the later load says what is missing)."""
    if is_local(model) or (not _unreachable and _offline_mode_reason()):
        return
    reason = hub_unavailable()
    if reason is not None and not cached_model(model):
        raise UsageError(
            f"model {model} is not in the local Hugging Face cache, and the Hub cannot be used "
            f"({reason}); {how}; {OFFLINE_ADVICE}"
        )
