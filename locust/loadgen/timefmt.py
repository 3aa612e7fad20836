"""Timestamps: the generator writes ISO-8601 UTC with milliseconds and a Z
(2026-11-22T19:00:00.123Z); the ledger reads any form the record rules accept.

The accepted form is rule 9 of the "Record rules" in tables.yaml (lakehouse_tables), implemented for
the job by lakehouse_job.timestamps; parse_iso_micros must accept exactly the same strings.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, date, datetime, timedelta
from typing import Final

from lakehouse_tables.rules import MAX_MICROS, MAX_OFFSET_MINUTES, MIN_MICROS

DAY_MS: Final = 86_400_000
_DAY_MICROS: Final = 86_400_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
# [0-9], not \d (any Unicode digit in Python), and fullmatch, so a trailing newline fails.
_ISO: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
    r"(?:Z|([+-])([0-9]{2}):([0-9]{2}))"
)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def format_ms(ms: int) -> str:
    """Epoch milliseconds -> '2026-11-22T19:00:00.123Z'."""
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def parse_iso_micros(value: object) -> int | None:
    """A timestamp string the record rules accept -> epoch microseconds; else None."""
    if not isinstance(value, str) or (m := _ISO.fullmatch(value)) is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, sign, off_hours, off_minutes = m.groups()[6:]
    try:
        days = date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError:  # month 13, Feb 30, year 0000
        return None
    if hour > 23 or minute > 59 or second > 59:  # no leap seconds, no 24:00
        return None
    offset = 0
    if sign is not None:
        offset = int(off_hours) * 60 + int(off_minutes)
        if int(off_minutes) > 59 or offset > MAX_OFFSET_MINUTES:
            return None
        offset = offset if sign == "+" else -offset
    # Integer arithmetic, not datetime: an offset may carry the instant past year 9999.
    seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60
    micros = seconds * 1_000_000 + int((fraction or "").ljust(6, "0"))
    return micros if MIN_MICROS <= micros <= MAX_MICROS else None


def parse_iso_ms(value: object) -> int | None:
    """parse_iso_micros truncated (floored) to milliseconds: the precision compared."""
    micros = parse_iso_micros(value)
    return None if micros is None else micros // 1000


def date_of_ms(ms: int) -> str:
    """UTC partition date (yyyy-MM-dd) of an epoch-ms instant."""
    return date_of_micros(ms * 1000)


def date_of_micros(micros: int) -> str:
    """UTC partition date (yyyy-MM-dd) of an epoch-microsecond instant."""
    return date.fromordinal(_EPOCH_ORDINAL + micros // _DAY_MICROS).isoformat()


def datetime_to_ms(dt: datetime) -> int:
    """A datetime (naive = UTC) -> epoch ms, truncated to millisecond precision."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)
