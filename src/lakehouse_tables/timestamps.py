"""Rule 9's timestamp form in Python: what the ledger and the declarations parse with.

The job implements the same rule with Spark expressions (lakehouse_job.timestamp_columns);
tests/vectors/records.jsonl holds the cases both must decide alike.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Final

from lakehouse_tables.rules import MAX_MICROS, MAX_OFFSET_MINUTES, MIN_MICROS

_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
# [0-9], not \d (any Unicode digit in Python), and fullmatch, so a trailing newline fails.
_ISO: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
    r"(?:Z|([+-])([0-9]{2}):([0-9]{2}))"
)


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
