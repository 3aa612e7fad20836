"""Quarantined records sent through the job again (redrive): their rows as the source's, and
the keys of those accepted now, which must be the quarantine's own keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lakehouse_job.hudi_options import SinkSettings
from lakehouse_job.parse import classify, quarantine_rows
from lakehouse_job.redrive import accepted_keys, as_source_rows, copy_to_raw, raw_copy_root
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables import columns
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit

TABLES = load_tables()
ORDERS = TABLES["orders"]
ARRIVAL = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
ORDER = {
    "event_type": "orders",
    "op": "u",
    "order_id": "o-1",
    "customer_id": "c-1",
    "amount": 12.5,
    "status": "created",
    "order_ts": "2026-11-20T10:00:00.000Z",
}


def test_records_quarantined_before_their_type_was_declared_are_accepted_under_their_keys(
    spark: SparkSession,
) -> None:
    no_key = {**ORDER, "order_id": None}
    # The second is a KPL user record (index 3 of its aggregate): its key says so.
    rows = [
        (
            bytearray(json.dumps(ORDER).encode()),
            "events",
            "pk",
            "shard-1",
            "100",
            ARRIVAL,
            None,
            None,
        ),
        (
            bytearray(json.dumps(no_key).encode()),
            "events",
            "pk",
            "shard-1",
            "200",
            ARRIVAL,
            3,
            None,
        ),
    ]
    batch = spark.createDataFrame(rows, KINESIS_SCHEMA)
    # Quarantined by a job whose tables file had no orders yet.
    before = {name: spec for name, spec in TABLES.items() if name != "orders"}
    refused = quarantine_rows(classify(batch, before)).collect()
    assert [r[columns.Q_REASON].startswith("unknown event_type") for r in refused] == [True, True]
    # Found again by their type (redrive.quarantined), though it was not declared.
    assert {r[columns.Q_EVENT_TYPE] for r in refused} == {"orders"}
    keys = {(r[columns.Q_SHARD_ID], r[columns.Q_SEQUENCE_NUMBER]) for r in refused}
    assert keys == {("shard-1", "100"), ("shard-1", "200/3")}

    source = as_source_rows(spark.createDataFrame(refused), ORDERS)
    again = source.orderBy("sequenceNumber").collect()
    assert [(r.sequenceNumber, r.subSequenceNumber) for r in again] == [("100", None), ("200", 3)]
    assert json.loads(bytes(again[0].data)) == ORDER
    assert again[0].approximateArrivalTimestamp == ARRIVAL.replace(tzinfo=None)
    assert {r.stream for r in again} == {ORDERS.stream or "redrive"}

    # Declared now: the complete order is accepted, under the key it was quarantined with;
    # the one without a key is still refused.
    accepted = accepted_keys(source, {"orders": ORDERS}).collect()
    assert [(r[columns.Q_SHARD_ID], r[columns.Q_SEQUENCE_NUMBER]) for r in accepted] == [
        ("shard-1", "100")
    ]


def source_row(order: dict, seq: str, subseq: int | None = None) -> tuple:
    return (
        bytearray(json.dumps(order).encode()),
        "events",
        "pk",
        "shard-1",
        seq,
        ARRIVAL,
        subseq,
        None,
    )


def test_accepted_records_join_the_raw_copy_once_even_when_a_run_is_repeated(
    spark: SparkSession, tmp_path: Path
) -> None:
    sink = SinkSettings(str(tmp_path / "wh"), str(tmp_path / "raw"), "db", "", hive_sync=False)
    # A plain record, a KPL user record (same sequence number, index 3), one still refused.
    rows = [
        source_row(ORDER, "100"),
        source_row({**ORDER, "order_id": "o-2"}, "100", 3),
        source_row({**ORDER, "order_id": None}, "200"),
    ]
    source = spark.createDataFrame(rows, KINESIS_SCHEMA)
    assert copy_to_raw(spark, sink, ORDERS, source, run_id="first") == 2
    # A run cut short after its copy is run again: nothing is copied twice.
    assert copy_to_raw(spark, sink, ORDERS, source, run_id="again") == 0
    later = spark.createDataFrame(
        [*rows, source_row({**ORDER, "order_id": "o-3"}, "300")], KINESIS_SCHEMA
    )
    assert copy_to_raw(spark, sink, ORDERS, later, run_id="later") == 1

    root = raw_copy_root(sink, ORDERS)
    assert root == f"{tmp_path}/raw/{ORDERS.table}/checkpoint=redrive"
    copied = spark.read.option("recursiveFileLookup", "true").json(root).collect()
    assert sorted(r[ORDERS.record_key] for r in copied) == ["o-1", "o-2", "o-3"]
    assert {r[columns.RAW_PAYLOAD] for r in copied} >= {json.dumps(ORDER)}
    # In the raw copy's layout, so the backfill and Trino's JSON table read them.
    assert sorted(p.name for p in Path(root).iterdir()) == ["batch_id=first", "batch_id=later"]
