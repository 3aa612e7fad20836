"""Debezium change events through the job's transforms (lakehouse_job.debezium, routed by
stream in lakehouse_job.envelope): every op, with and without the embedded schema,
tombstones, events that are not row changes, and the LSN ordering in the dedupe.

One batch holds every case; it is classified once per module and each test looks up its
records by sequence number, as test_parse does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from lakehouse_job.dedupe import dedupe
from lakehouse_job.parse import split_batch
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables import columns, rules
from lakehouse_tables.declarations import TABLES_YAML, TableSpec, parse_tables
from tests.unit.lakehouse_job.test_parse import collect_by_seq, micros

pytestmark = pytest.mark.unit

CDC_TABLES = Path(__file__).resolve().parents[3] / "services" / "cdc" / "tables.yaml"
ORDERS_STREAM = "dbserver1.public.orders"
CUSTOMERS_STREAM = "dbserver1.public.customers"
ARRIVAL = datetime(2026, 11, 24, 10, 0, 0, tzinfo=UTC)
COMMIT_MS = 1_764_000_000_123  # 2025-11-24T16:00:00.123Z
COMMIT_ISO = "2025-11-24T16:00:00.123+00:00"

# Debezium's JSON converter schema (abridged: the job never reads it).
SCHEMA = {"type": "struct", "name": "dbserver1.public.orders.Envelope", "fields": []}


def order_row(order_id: int, **overrides: Any) -> dict[str, Any]:
    row = {
        "order_id": order_id,
        "customer_id": 7,
        "amount": "19.99",  # decimal.handling.mode=string: numeric's exact digits
        "status": "placed",
        "placed_at": "2025-11-24T15:59:59.5Z",
        "updated_at": "2025-11-24T16:00:00.123456Z",
    }
    row.update(overrides)
    return row


def event(
    op: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    lsn: int | None = 1000,
    with_schema: bool = False,
    **source: Any,
) -> str:
    block: dict[str, Any] = {
        "version": "3.6.1.Final",
        "connector": "postgresql",
        "name": "dbserver1",
        "ts_ms": COMMIT_MS,
        "db": "lakehouse",
        "schema": "public",
        "table": "orders",
        "txId": 771,
        **({} if lsn is None else {"lsn": lsn}),
        **source,
    }
    payload = {"before": before, "after": after, "source": block, "op": op, "ts_ms": COMMIT_MS}
    return json.dumps({"schema": SCHEMA, "payload": payload} if with_schema else payload)


# seq -> (stream, payload)
VALID: dict[int, tuple[str, str]] = {
    1: (ORDERS_STREAM, event("c", None, order_row(1), lsn=1001, with_schema=True)),
    2: (ORDERS_STREAM, event("u", None, order_row(2, status="paid"), lsn=1002)),
    3: (ORDERS_STREAM, event("d", {"order_id": 3}, None, lsn=1003, with_schema=True)),
    4: (ORDERS_STREAM, event("r", None, order_row(4), lsn=900)),
    # Replica identity full: the delete's before holds every column.
    5: (ORDERS_STREAM, event("d", order_row(5), None, lsn=1005)),
    6: (
        CUSTOMERS_STREAM,
        event(
            "c",
            None,
            {
                "customer_id": 7,
                "name": "Ada",
                "email": "ada@example.org",
                "city": None,
                "updated_at": "2025-11-24T16:00:00Z",
            },
            lsn=990,
            table="customers",
        ),
    ),
    # The last change of order 9 (LSN 1203) arrives first, an older one later, and one
    # change is delivered twice (at-least-once): the dedupe keeps LSN 1203.
    20: (ORDERS_STREAM, event("u", None, order_row(9, status="shipped"), lsn=1203)),
    21: (ORDERS_STREAM, event("c", None, order_row(9, status="placed"), lsn=1201)),
    22: (ORDERS_STREAM, event("u", None, order_row(9, status="paid"), lsn=1202)),
    23: (ORDERS_STREAM, event("u", None, order_row(9, status="paid"), lsn=1202)),
    # A delete that comes before an older update of the same key still wins.
    24: (ORDERS_STREAM, event("d", {"order_id": 10}, None, lsn=1302, with_schema=True)),
    25: (ORDERS_STREAM, event("u", None, order_row(10, status="paid"), lsn=1301)),
    # A flat record of the main tables file on its own stream is untouched.
    30: (
        "events",
        json.dumps(
            {
                "event_type": "orders",
                "order_id": "o-30",
                "customer_id": "c-1",
                "amount": 1.0,
                "status": "created",
                "order_ts": "2026-11-22T19:00:00.123Z",
            }
        ),
    ),
}

NOT_DBZ = rules.NOT_DEBEZIUM_REASON
QUARANTINED: dict[int, tuple[str, str | bytes, str]] = {
    40: (ORDERS_STREAM, event("t", None, None), rules.DEBEZIUM_TRUNCATE_REASON),
    41: (ORDERS_STREAM, "not json {", f"{NOT_DBZ}: not one JSON object"),
    42: (
        ORDERS_STREAM,
        event("c", None, order_row(42)) + " trailing",
        f"{NOT_DBZ}: not one JSON object",
    ),
    43: (
        ORDERS_STREAM,
        json.dumps(order_row(43)),
        f"{NOT_DBZ}: no op (a Debezium JSON change event has payload.op)",
    ),
    44: (ORDERS_STREAM, event("m", None, None), f"{NOT_DBZ}: op 'm'"),
    45: (
        ORDERS_STREAM,
        event("u", None, order_row(45), lsn=None),
        f"{NOT_DBZ}: no source.lsn (only PostgreSQL's connector is read)",
    ),
    46: (ORDERS_STREAM, event("u", None, None), f"{NOT_DBZ}: op 'u' without an object in after"),
    47: (ORDERS_STREAM, event("d", None, None), f"{NOT_DBZ}: op 'd' without an object in before"),
    48: (
        ORDERS_STREAM,
        event("c", None, order_row(48, customer_id="seven")),
        "wrong type for customer_id: expected long",
    ),
    49: (ORDERS_STREAM, event("c", None, order_row(49, op="x")), "duplicate key 'op'"),
    50: (ORDERS_STREAM, event("c", None, {"customer_id": 1}), "missing record key order_id"),
    # A Debezium entry reads its own stream only.
    51: (
        "events",
        json.dumps({"event_type": "cdc_orders", **order_row(51)}),
        "unknown event_type 'cdc_orders'",
    ),
    52: (ORDERS_STREAM, b"\xff\xfe", rules.NOT_UTF8_REASON),
    # An unchanged TOAST column of a table without REPLICA IDENTITY FULL.
    53: (
        ORDERS_STREAM,
        event("u", None, order_row(53, status=rules.DEBEZIUM_UNAVAILABLE_PLACEHOLDER)),
        rules.DEBEZIUM_UNAVAILABLE_REASON,
    ),
}
# Skipped: a tombstone carries no change (Kafka's null value after a delete).
TOMBSTONES: dict[int, tuple[str, bytes]] = {60: (ORDERS_STREAM, b""), 61: (ORDERS_STREAM, b"null")}


def specs() -> Mapping[str, TableSpec]:
    main = TABLES_YAML.read_text()
    cdc = CDC_TABLES.read_text().split("event_types:\n", 1)[1]
    return parse_tables(main + cdc, source="main + cdc tables")


@dataclass(frozen=True)
class Collected:
    inputs: int
    valid: dict[str, dict[int, dict[str, Any]]]
    raw: dict[str, dict[int, dict[str, Any]]]
    quarantine: dict[int, dict[str, Any]]
    deduped: dict[int, dict[str, Any]]


def batch(spark: SparkSession) -> DataFrame:
    rows = []
    everything: dict[int, tuple[str, str | bytes]] = {
        **VALID,
        **{seq: (stream, p) for seq, (stream, p, _) in QUARANTINED.items()},
        **TOMBSTONES,
    }
    for seq, (stream, payload) in everything.items():
        data = payload.encode() if isinstance(payload, str) else payload
        rows.append((bytearray(data), stream, "pk", "shardId-0", str(seq), ARRIVAL, None, None))
    return spark.createDataFrame(rows, KINESIS_SCHEMA)


@pytest.fixture(scope="module")
def collected(spark: SparkSession) -> Collected:
    tables = specs()
    source = batch(spark)
    split = split_batch(source, tables)
    split.classified.persist()
    try:
        orders = dedupe(split.valid["cdc_orders"], tables["cdc_orders"])
        return Collected(
            inputs=source.count(),
            valid={n: collect_by_seq(df, columns.INGEST_SEQ) for n, df in split.valid.items()},
            raw={n: collect_by_seq(df, columns.INGEST_SEQ) for n, df in split.raw.items()},
            quarantine=collect_by_seq(split.quarantine, columns.Q_SEQUENCE_NUMBER),
            deduped={row["order_id"]: row for row in collect_by_seq(orders, "order_id").values()},
        )
    finally:
        split.classified.unpersist()


def test_every_change_lands_once_and_tombstones_are_skipped(collected: Collected) -> None:
    seqs = [seq for rows in collected.valid.values() for seq in rows] + list(collected.quarantine)

    assert sorted(seqs) == sorted([*VALID, *QUARANTINED])
    assert collected.inputs == len(VALID) + len(QUARANTINED) + len(TOMBSTONES)


@pytest.mark.parametrize("seq", sorted(QUARANTINED))
def test_quarantine_reason(collected: Collected, seq: int) -> None:
    assert collected.quarantine[seq]["reason"] == QUARANTINED[seq][2]
    assert rules.ledger_kind(collected.quarantine[seq]["reason"])  # a rule names every reason


def test_quarantine_keeps_the_original_event(collected: Collected) -> None:
    assert collected.quarantine[40]["raw_payload"] == QUARANTINED[40][1]
    assert collected.quarantine[40]["event_type"] == "cdc_orders"


def test_create_with_schema_reads_after_and_the_source_block(collected: Collected) -> None:
    row = collected.valid["cdc_orders"][1]

    assert {k: row[k] for k in ("order_id", "customer_id", "amount", "status")} == {
        "order_id": 1,
        "customer_id": 7,
        "amount": Decimal("19.99"),
        "status": "placed",
    }
    assert row["placed_at"] == micros("2025-11-24T15:59:59.5+00:00")
    assert row["updated_at"] == micros("2025-11-24T16:00:00.123456+00:00")
    assert row["source_lsn"] == 1001
    assert row["committed_at"] == micros(COMMIT_ISO)
    assert row["commit_date"] == "2025-11-24"
    assert (row[columns.OP], row[columns.IS_DELETED]) == ("c", False)


def test_update_without_schema(collected: Collected) -> None:
    row = collected.valid["cdc_orders"][2]

    assert (row["status"], row["source_lsn"], row[columns.OP]) == ("paid", 1002, "u")


def test_delete_reads_before_key_only(collected: Collected) -> None:
    row = collected.valid["cdc_orders"][3]

    assert (row["order_id"], row["status"], row["amount"]) == (3, None, None)
    assert (row[columns.OP], row[columns.IS_DELETED], row["source_lsn"]) == ("d", True, 1003)
    assert row["commit_date"] == "2025-11-24"


def test_delete_with_full_replica_identity_keeps_the_columns(collected: Collected) -> None:
    row = collected.valid["cdc_orders"][5]

    assert (row["order_id"], row["status"], row[columns.IS_DELETED]) == (5, "placed", True)


def test_snapshot_read_is_an_upsert(collected: Collected) -> None:
    row = collected.valid["cdc_orders"][4]

    assert (row["order_id"], row[columns.OP], row[columns.IS_DELETED]) == (4, "u", False)


def test_each_stream_feeds_its_own_entry(collected: Collected) -> None:
    customer = collected.valid["cdc_customers"][6]

    assert (customer["customer_id"], customer["name"], customer["city"]) == (7, "Ada", None)
    assert sorted(collected.valid["orders"]) == [30]
    assert 6 not in collected.valid["cdc_orders"]


def test_raw_copy_keeps_the_change_event_as_sent(collected: Collected) -> None:
    raw = collected.raw["cdc_orders"][24]

    assert raw[columns.RAW_PAYLOAD] == VALID[24][1]
    assert json.loads(raw[columns.RAW_PAYLOAD])["payload"]["op"] == "d"


def test_newest_change_wins_whatever_the_arrival_order_duplicates_absorbed(
    collected: Collected,
) -> None:
    nine, ten = collected.deduped[9], collected.deduped[10]

    assert (nine["status"], nine["source_lsn"]) == ("shipped", 1203)
    assert (ten[columns.IS_DELETED], ten["source_lsn"]) == (True, 1302)
