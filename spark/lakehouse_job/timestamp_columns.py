"""Strict ISO-8601 timestamp parsing and UTC day derivation as Column expressions.

The accepted form is part of the record rules in tables.yaml; the load generator's
ledger (loadgen.timefmt.parse_iso_micros) implements the same rule in Python.
"""

from __future__ import annotations

from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F

from lakehouse_tables.rules import MAX_MICROS, MIN_MICROS

# Spark's own string->timestamp parsing is lenient ("2026-11-22", "2026-11-22 19:00" and
# epoch numbers all pass), so the shape is checked first: date 'T' time, optional
# fraction of up to microseconds (Spark's precision), and an explicit zone, Z or +hh:mm.
# [0-9], not \d, and \z, not $: the same regex must mean the same thing in Python, where
# \d matches any Unicode digit and $ also matches before a trailing newline.
ISO_TIMESTAMP_REGEX: Final = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})\z"
)
# The fraction section accepts 1..6 digits when parsing; XXX accepts Z and +hh:mm.
_PATTERN: Final = "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]XXX"
_SECONDS_PER_DAY: Final = 86_400


def lenient_timestamp(raw: Column) -> Column:
    """Spark's parse of `raw` by the ISO pattern, before the strict checks: selected as a
    column of its own and passed to strict_iso_timestamp, so the text is parsed once (the
    zone comes from the string: the result does not depend on the session time zone).
    try_to_timestamp (not to_timestamp) so that impossible dates such as 2026-02-30 give
    null rather than an error when ANSI mode is on."""
    return F.try_to_timestamp(raw, F.lit(_PATTERN))


def strict_iso_timestamp(raw: Column, lenient: Column) -> Column:
    """The instant `raw` names, or null if it is not a strict ISO-8601 timestamp within the
    accepted range; `lenient` is lenient_timestamp(raw)'s column."""
    in_range = F.unix_micros(lenient).between(MIN_MICROS, MAX_MICROS)
    return F.when(raw.rlike(ISO_TIMESTAMP_REGEX) & in_range, lenient)


ISO_DATE_REGEX: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\z"


def parse_iso_date(raw: Column) -> Column:
    """The date `raw` names (yyyy-MM-dd exactly), or null; try_to_timestamp so that
    2026-02-30 gives null, not an error."""
    return F.when(
        raw.rlike(ISO_DATE_REGEX), F.to_date(F.try_to_timestamp(raw, F.lit("yyyy-MM-dd")))
    )


def utc_date_string(ts: Column) -> Column:
    """yyyy-MM-dd of the UTC day containing `ts`.

    Computed from epoch seconds rather than date_format, which renders in the session
    time zone: a job started without spark.sql.session.timeZone=UTC would otherwise
    write events near midnight into the wrong partition.
    """
    days = F.floor(F.unix_seconds(ts) / F.lit(_SECONDS_PER_DAY)).cast("int")
    return F.date_from_unix_date(days).cast("string")
