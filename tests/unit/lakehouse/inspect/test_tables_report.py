"""lakehouse.inspect.tables_report: what `lakehouse tables` asks Trino and how it prints it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lakehouse.inspect import tables_report
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit


class Missing(Exception):
    error_name = "TABLE_NOT_FOUND"


def test_each_entry_s_tables_counts_and_newest_commit() -> None:
    tables = load_tables()
    asked: list[str] = []

    def query(sql: str) -> list[Any]:
        asked.append(sql)
        if "orders" not in sql and "order" not in sql:
            raise Missing(sql)
        if "$timeline" in sql:
            return [["20260102030405123" if "_cow" in sql else "20260102030400000"]]
        return [[42 if "_json" not in sql else 50]]

    reports = tables_report.gather(query, tables, "lakehouse")
    orders = reports[0]
    assert orders.event_type == "orders"
    assert orders.hudi_tables == ("hudi_orders_cow", "hudi_orders_mor_ro")
    assert (orders.live_view, orders.live_rows) == ("orders", 42)
    assert (orders.raw_table, orders.raw_records) == ("orders_json", 50)
    expected = datetime(2026, 1, 2, 3, 4, 5, 123000).astimezone()
    assert orders.newest_commit == expected
    assert 'hudi.lakehouse."hudi_orders_cow$timeline"' in " ".join(asked)
    ticker = reports[1]
    assert (ticker.live_rows, ticker.raw_records, ticker.newest_commit) == (None, None, None)


def test_other_errors_are_not_taken_for_a_missing_table() -> None:
    def query(sql: str) -> list[Any]:
        raise ConnectionRefusedError("no Trino")

    with pytest.raises(ConnectionRefusedError):
        tables_report.gather(query, load_tables(), "lakehouse")
    assert isinstance(ConnectionRefusedError(), tables_report.UNREACHABLE)


def test_the_table_and_its_ages() -> None:
    now = datetime(2026, 1, 2, 4, 0, 0, tzinfo=UTC)
    reports = [
        tables_report.EntryReport(
            "orders",
            ("hudi_orders_cow", "hudi_orders_mor_ro"),
            "orders",
            1234,
            "orders_json",
            1300,
            now - timedelta(minutes=5, seconds=3),
        ),
        tables_report.EntryReport("iot", ("iot_cow",), "iot", None, "iot_json", None, None),
    ]
    lines = tables_report.format_reports(reports, now).splitlines()
    assert lines[0].split() == [
        "ENTRY", "LIVE", "VIEW", "ROWS", "RAW", "COPY", "RECORDS", "HUDI", "TABLES",
        "NEWEST", "COMMIT", "AGE",
    ]  # fmt: skip
    assert lines[1].split() == [
        "orders", "orders", "1,234", "orders_json", "1,300", "hudi_orders_cow,",
        "hudi_orders_mor_ro", "2026-01-02", "03:54:57", "5m", "3s",
    ]  # fmt: skip
    assert lines[2].split() == ["iot", "iot", "-", "iot_json", "-", "iot_cow", "-", "-"]
    assert [tables_report.age(timedelta(seconds=s)) for s in (42, 3 * 3600 + 60, 90_000)] == [
        "42s",
        "3h 1m",
        "1d 1h",
    ]
