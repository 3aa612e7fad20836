"""Richer declared types through the job's transforms (lakehouse_job.field_checks): decimals
exact or quarantined (never rounded), dates, and nested struct/array/map values.

One batch holds every case; it is classified once per module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from lakehouse_job.dedupe import dedupe
from lakehouse_job.parse import split_batch
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables import columns, rules
from lakehouse_tables.declarations import Tables, parse_tables
from tests.unit.lakehouse_job.test_parse import collect_by_seq

pytestmark = pytest.mark.unit

TABLES = """
event_types:
  invoices:
    table: invoices
    schema:
      invoice_id: string
      amount: decimal(12,2)
      due: date
      lines: array<struct<sku:string,qty:long,price:decimal(10,2)>>
      tags: map<string,string>
      device: struct<id:string,reading:double>
      issued_ts: timestamp
    record_key: invoice_id
    precombine: issued_ts
    partition_by: {name: issued_date, from: issued_ts}
"""
ARRIVAL = datetime(2026, 11, 24, 10, 0, 0, tzinfo=UTC)


def invoice(seq: int, **overrides: Any) -> str:
    event: dict[str, Any] = {
        "event_type": "invoices",
        "invoice_id": f"i-{seq}",
        "amount": 1234.5,
        "due": "2026-12-31",
        "lines": [{"sku": "a", "qty": 2, "price": 9.99}, {"sku": "b", "qty": 1, "price": 0.5}],
        "tags": {"channel": "web"},
        "device": {"id": "d-1", "reading": 21.5},
        "issued_ts": "2026-11-24T09:00:00Z",
    }
    event.update(overrides)
    return json.dumps(event)


VALID: dict[int, str] = {
    1: invoice(1),
    2: invoice(2, amount="0.10"),  # a decimal sent as a JSON string
    3: invoice(3, amount=9999999999.99),  # the largest that fits decimal(12,2)
    4: invoice(4, amount=-7, lines=[], tags={}, device=None),
}
QUARANTINED: dict[int, tuple[str, str]] = {
    10: (
        invoice(10, amount=12.345),
        f"{rules.OUT_OF_RANGE_REASON} amount: does not fit decimal(12,2) exactly",
    ),
    11: (
        invoice(11, amount=12345678901.5),
        f"{rules.WRONG_TYPE_REASON} amount: expected decimal(12,2)",
    ),
    12: (invoice(12, amount="twelve"), f"{rules.WRONG_TYPE_REASON} amount: expected decimal(12,2)"),
    13: (
        invoice(13, due="2026-02-30"),
        f"{rules.WRONG_TYPE_REASON} due: expected date (yyyy-MM-dd)",
    ),
    14: (
        invoice(14, due="31/12/2026"),
        f"{rules.WRONG_TYPE_REASON} due: expected date (yyyy-MM-dd)",
    ),
    15: (
        invoice(15, device="d-1"),
        f"{rules.WRONG_TYPE_REASON} device: expected struct<id:string,reading:double>",
    ),
}


@dataclass(frozen=True)
class Collected:
    valid: dict[int, dict[str, Any]]
    quarantine: dict[int, dict[str, Any]]
    deduped: dict[str, dict[str, Any]]


def tables() -> Tables:
    return parse_tables(TABLES, source="types test")


def batch(spark: SparkSession) -> DataFrame:
    records = {**VALID, **{seq: text for seq, (text, _) in QUARANTINED.items()}}
    rows = [
        (bytearray(text.encode()), "s", "pk", "shardId-0", str(seq), ARRIVAL, None, None)
        for seq, text in records.items()
    ]
    return spark.createDataFrame(rows, KINESIS_SCHEMA)


@pytest.fixture(scope="module")
def collected(spark: SparkSession) -> Collected:
    split = split_batch(batch(spark), tables())
    split.classified.persist()
    try:
        deduped = dedupe(split.valid["invoices"], tables()["invoices"]).collect()
        return Collected(
            valid=collect_by_seq(split.valid["invoices"], columns.INGEST_SEQ),
            quarantine=collect_by_seq(split.quarantine, columns.Q_SEQUENCE_NUMBER),
            deduped={row["invoice_id"]: row.asDict() for row in deduped},
        )
    finally:
        split.classified.unpersist()


def test_valid_records_keep_exact_values(collected: Collected) -> None:
    assert sorted(collected.valid) == sorted(VALID)
    first = collected.valid[1]
    assert first["amount"] == Decimal("1234.50")
    assert first["due"] == date(2026, 12, 31)
    lines = [line.asDict() for line in first["lines"]]
    assert lines == [
        {"sku": "a", "qty": 2, "price": Decimal("9.99")},
        {"sku": "b", "qty": 1, "price": Decimal("0.50")},
    ]
    assert first["tags"] == {"channel": "web"}
    assert first["device"].asDict() == {"id": "d-1", "reading": 21.5}
    assert collected.valid[2]["amount"] == Decimal("0.10")
    assert collected.valid[3]["amount"] == Decimal("9999999999.99")
    assert collected.valid[4]["amount"] == Decimal("-7.00")
    assert collected.valid[4]["lines"] == [] and collected.valid[4]["device"] is None


@pytest.mark.parametrize("seq", sorted(QUARANTINED))
def test_a_value_the_type_cannot_hold_exactly_is_quarantined(
    collected: Collected, seq: int
) -> None:
    assert collected.quarantine[seq]["reason"] == QUARANTINED[seq][1]
    assert collected.quarantine[seq]["raw_payload"] == QUARANTINED[seq][0]


def test_the_dedupe_takes_rows_with_maps_and_nested_values(collected: Collected) -> None:
    # max() over a struct holding the row failed on the map column (maps have no order).
    assert sorted(collected.deduped) == sorted(f"i-{seq}" for seq in VALID)
    assert collected.deduped["i-1"]["tags"] == {"channel": "web"}


def test_nothing_is_lost(collected: Collected) -> None:
    assert sorted([*collected.valid, *collected.quarantine]) == sorted([*VALID, *QUARANTINED])
