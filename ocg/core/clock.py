"""The one clock of ocg's records: UTC, to the second, as ISO 8601 (run cards, report stamps, the
lock's holder, sweep states, provenance)."""

from __future__ import annotations

import datetime as _dt


def utc_now() -> _dt.datetime:
    """Now, in UTC, to the second."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)


def utc_stamp() -> str:
    """Now as written into a record: e.g. 2026-12-05T12:00:00+00:00."""
    return utc_now().isoformat(timespec="seconds")
