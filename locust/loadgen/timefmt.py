"""ISO-8601 UTC timestamps with milliseconds and a Z: 2026-11-22T19:00:00.123Z."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

DAY_MS = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def format_ms(ms: int) -> str:
    """Epoch milliseconds -> '2026-11-22T19:00:00.123Z'."""
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def parse_iso_ms(value: object) -> int | None:
    """Strictly parse the generator's format back to epoch ms; None if invalid."""
    if not isinstance(value, str) or not _ISO_MS.match(value):
        return None
    try:
        dt = datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(dt.timestamp()) * 1000 + int(value[20:23])


def date_of_ms(ms: int) -> str:
    """UTC partition date (yyyy-MM-dd) of an epoch-ms instant."""
    return datetime.fromtimestamp(ms // 1000, tz=UTC).strftime("%Y-%m-%d")


def datetime_to_ms(dt: datetime) -> int:
    """A datetime (naive = UTC) -> epoch ms, truncated to millisecond precision."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)
