"""`lakehouse tables`: each entry of the tables file with the tables the job makes of it,
their row counts and the newest commit, as Trino sees them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from lakehouse_tables.declarations import Tables, TableSpec
from lakehouse_tables.query_views import (
    HUDI_CATALOG,
    VIEW_CATALOG,
    json_table_name,
    live_view_name,
)

# Trino's errors for a table, or the whole database, that is not there (yet).
NOT_THERE = frozenset({"TABLE_NOT_FOUND", "SCHEMA_NOT_FOUND"})


def table_missing(error: Exception) -> bool:
    return getattr(error, "error_name", None) in NOT_THERE


@dataclass(frozen=True)
class EntryReport:
    """One entry: its names, rows (None: the table is not there yet) and newest commit."""

    event_type: str
    hudi_tables: tuple[str, ...]  # as Trino names them: <table>_cow, <table>_mor_ro
    live_view: str
    live_rows: int | None
    raw_table: str
    raw_records: int | None
    newest_commit: datetime | None  # the newest completed instant of its Hudi tables


def hudi_tables(spec: TableSpec) -> tuple[str, ...]:
    """The entry's Hudi tables as Trino reads them: CoW, and MoR's read-optimized table."""
    names = []
    for table_type in spec.table_types:
        name = spec.table_name(table_type)
        names.append(name if table_type == "COPY_ON_WRITE" else f"{name}_ro")
    return tuple(names)


def instant_time(instant: str) -> datetime:
    """A Hudi instant (yyyyMMddHHmmssSSS) as the time it names: the job's timeline is in the
    local time zone of the machine it runs on (hoodie.table.timeline.timezone=LOCAL)."""
    return datetime.strptime(instant[:17].ljust(17, "0"), "%Y%m%d%H%M%S%f").astimezone()


Query = Callable[[str], list[Sequence[Any]]]


def gather(
    query: Query,
    tables: Tables,
    database: str,
    is_missing: Callable[[Exception], bool] = table_missing,
) -> list[EntryReport]:
    """The report of every entry; `query` runs one SQL statement in Trino, and a table
    `is_missing` (the error Trino raised for it) is reported as not there yet."""

    def scalar(sql: str) -> Any:
        try:
            rows = query(sql)
        except Exception as error:
            if is_missing(error):
                return None
            raise
        return rows[0][0] if rows else None

    reports = []
    for spec in tables.values():
        names = hudi_tables(spec)
        instants = [
            scalar(
                f'SELECT max(timestamp) FROM {HUDI_CATALOG}.{database}."{name}$timeline" '
                "WHERE state = 'COMPLETED'"
            )
            for name in names
        ]
        newest = max((str(i) for i in instants if i), default=None)
        reports.append(
            EntryReport(
                spec.event_type,
                names,
                live_view_name(spec),
                scalar(f"SELECT count(*) FROM {VIEW_CATALOG}.{database}.{live_view_name(spec)}"),
                json_table_name(spec),
                scalar(f"SELECT count(*) FROM {VIEW_CATALOG}.{database}.{json_table_name(spec)}"),
                instant_time(newest) if newest else None,
            )
        )
    return reports


def age(delta: timedelta) -> str:
    """'42s', '5m 3s', '2h 10m', '3d 4h'."""
    seconds = max(0, int(delta.total_seconds()))
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {seconds}s"
    return f"{seconds}s"


def format_reports(reports: Sequence[EntryReport], now: datetime) -> str:
    """A table: one line per entry; '-' for a table the job has not written yet."""

    def count(value: int | None) -> str:
        return "-" if value is None else f"{value:,}"

    header = (
        "ENTRY",
        "LIVE VIEW",
        "ROWS",
        "RAW COPY",
        "RECORDS",
        "HUDI TABLES",
        "NEWEST COMMIT",
        "AGE",
    )
    lines = [header]
    for r in reports:
        lines.append(
            (
                r.event_type,
                r.live_view,
                count(r.live_rows),
                r.raw_table,
                count(r.raw_records),
                ", ".join(r.hudi_tables),
                r.newest_commit.strftime("%Y-%m-%d %H:%M:%S") if r.newest_commit else "-",
                age(now - r.newest_commit) if r.newest_commit else "-",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    numeric = {2, 4}
    return "\n".join(
        "  ".join(
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    )


def _unreachable() -> tuple[type[Exception], ...]:
    from trino.exceptions import HttpError, TrinoConnectionError

    # requests' connection errors are OSErrors
    return (OSError, TrinoConnectionError, HttpError)


# Trino does not answer: the stack is down.
UNREACHABLE = _unreachable()
