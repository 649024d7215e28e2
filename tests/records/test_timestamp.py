"""The one timestamp format of everything infoppo writes."""

from __future__ import annotations

import datetime

from infoppo_cli.records import utc_timestamp


def test_utc_timestamp_is_iso_to_the_second():
    stamp = utc_timestamp()
    parsed = datetime.datetime.fromisoformat(stamp)
    assert parsed.tzinfo is not None and parsed.utcoffset() == datetime.timedelta(0)
    assert parsed.microsecond == 0 and stamp.endswith("+00:00")
