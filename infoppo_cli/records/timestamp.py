"""The timestamp format of everything infoppo writes (manifests, sweep state, caches, eval metrics)."""

from __future__ import annotations

import datetime


def utc_timestamp() -> str:
    """Now, in UTC, as ISO 8601 to the second (``2026-11-23T06:05:16+00:00``): every manifest and state
    file uses this one format."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
