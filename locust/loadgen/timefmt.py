"""Timestamps: the generator writes ISO-8601 UTC with milliseconds and a Z
(2026-11-22T19:00:00.123Z); the ledger reads any form the record rules accept.

The accepted form is rule 9 of the "Record rules" in tables.yaml; its Python side,
parse_iso_micros, lives in lakehouse_tables.timestamps (the job's: lakehouse_job.timestamp_columns).
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from typing import Final

from lakehouse_tables.timestamps import parse_iso_micros

__all__ = ["parse_iso_micros"]  # the ledger's side of rule 9, shared with the declarations

DAY_MS: Final = 86_400_000
_DAY_MICROS: Final = 86_400_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def format_ms(ms: int) -> str:
    """Epoch milliseconds -> '2026-11-22T19:00:00.123Z'."""
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


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
