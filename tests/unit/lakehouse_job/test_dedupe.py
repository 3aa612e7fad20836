"""One row per record key within a micro-batch (lakehouse_job.dedupe)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from lakehouse_job.dedupe import dedupe
from lakehouse_job.parse import split_batch
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables.declarations import TABLES_YAML, load_tables

pytestmark = pytest.mark.unit

SHARD_0 = "shardId-000000000000"
SHARD_1 = "shardId-000000000001"


def order(order_id: str, ts: str, op: str, amount: float | None = None) -> bytearray:
    event: dict[str, Any] = {
        "event_type": "orders",
        "order_id": order_id,
        "order_ts": f"2026-11-22T{ts}Z",
        "op": op,
        "amount": amount,
    }
    return bytearray(json.dumps(event).encode())


# (shard, sequence number, payload), in arrival order.
ARRIVALS = [
    # o-late: arrives out of order; the latest event time wins, not the last arrival.
    (SHARD_0, "1001", order("o-late", "10:02:00.000", "u", 3.0)),
    (SHARD_0, "1002", order("o-late", "10:00:00.000", "c", 1.0)),
    (SHARD_0, "1003", order("o-late", "10:01:00.000", "u", 2.0)),
    # o-dup: a producer retry (same key, same event time): one row, the later sequence
    # number, compared as a number ("999" < "1004") though the strings sort the other way.
    (SHARD_0, "999", order("o-dup", "10:00:00.000", "c", 1.0)),
    (SHARD_0, "1004", order("o-dup", "10:00:00.000", "c", 2.0)),
    (SHARD_0, "1005", order("o-dup", "10:00:00.000", "c", 1.0)),
    # o-del: the delete is newer than an update that arrives after it: the delete wins.
    (SHARD_0, "1006", order("o-del", "10:05:00.000", "d")),
    (SHARD_0, "1007", order("o-del", "10:03:00.000", "u", 5.0)),
    # o-back: an update newer than the delete brings the order back.
    (SHARD_0, "1008", order("o-back", "10:05:00.000", "d")),
    (SHARD_0, "1009", order("o-back", "10:06:00.000", "u", 6.0)),
    # o-shard: same event time from two shards: the higher shard id wins.
    (SHARD_1, "5", order("o-shard", "10:00:00.000", "u", 1.0)),
    (SHARD_0, "1010", order("o-shard", "10:00:00.000", "u", 0.0)),
    # o-one: a single event is kept as it is.
    (SHARD_0, "1011", order("o-one", "09:00:00.000", "c", 9.0)),
]


@pytest.fixture(scope="module")
def deduped(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    spec = load_tables(TABLES_YAML)["orders"]
    rows = [(data, "events", "pk", shard, seq, None, None, None) for shard, seq, data in ARRIVALS]
    valid = split_batch(spark.createDataFrame(rows, KINESIS_SCHEMA), {"orders": spec}).valid
    return valid["orders"], dedupe(valid["orders"], spec)


@pytest.fixture(scope="module")
def winners(deduped: tuple[DataFrame, DataFrame]) -> dict[str, dict[str, Any]]:
    rows = deduped[1].collect()
    assert len(rows) == len({r["order_id"] for r in rows}), "one row per key"
    return {r["order_id"]: r.asDict() for r in rows}


def test_one_row_per_key(winners: dict[str, dict[str, Any]]) -> None:
    assert sorted(winners) == ["o-back", "o-del", "o-dup", "o-late", "o-one", "o-shard"]


def test_latest_event_time_wins_whatever_the_arrival_order(
    winners: dict[str, dict[str, Any]],
) -> None:
    late = winners["o-late"]

    assert (late["amount"], late["_op"], late["_ingest_seq"]) == (3.0, "u", "1001")


def test_exact_duplicates_collapse_to_the_highest_sequence_number(
    winners: dict[str, dict[str, Any]],
) -> None:
    assert (winners["o-dup"]["_ingest_seq"], winners["o-dup"]["amount"]) == ("1005", 1.0)


def test_delete_beats_an_older_update_in_the_same_batch(
    winners: dict[str, dict[str, Any]],
) -> None:
    deleted = winners["o-del"]

    assert (deleted["_op"], deleted["_is_deleted"], deleted["amount"]) == ("d", True, None)


def test_newer_update_beats_a_delete(winners: dict[str, dict[str, Any]]) -> None:
    back = winners["o-back"]

    assert (back["_op"], back["_is_deleted"], back["amount"]) == ("u", False, 6.0)


def test_ties_across_shards_are_deterministic(winners: dict[str, dict[str, Any]]) -> None:
    assert (winners["o-shard"]["_ingest_shard"], winners["o-shard"]["amount"]) == (SHARD_1, 1.0)


def test_columns_are_unchanged(
    deduped: tuple[DataFrame, DataFrame], winners: dict[str, dict[str, Any]]
) -> None:
    before, after = deduped

    # Nullability may differ after the aggregation; names, order and types may not.
    assert [(f.name, f.dataType) for f in after.schema] == [
        (f.name, f.dataType) for f in before.schema
    ]
    assert winners["o-one"]["amount"] == 9.0
    assert winners["o-one"]["partition_date"] == "2026-11-22"


def test_equal_event_times_in_one_aggregate_go_to_the_later_user_record(
    spark: SparkSession,
) -> None:
    spec = load_tables(TABLES_YAML)["orders"]
    event = {"event_type": "orders", "order_id": "o-1", "order_ts": "2026-11-20T10:00:00Z"}
    rows = [
        (bytearray(json.dumps({**event, "status": s}).encode()), "events", "pk", "s-0", "9", None,
         i, None)
        for i, s in [(1, "second"), (0, "first")]
    ]  # fmt: skip
    valid = split_batch(spark.createDataFrame(rows, KINESIS_SCHEMA), {"orders": spec}).valid
    (winner,) = dedupe(valid["orders"], spec).collect()
    assert winner["status"] == "second"


def test_a_key_of_several_fields_keeps_one_row_per_combination(spark: SparkSession) -> None:
    spec = replace(load_tables(TABLES_YAML)["orders"], record_key="order_id,customer_id")
    rows = []
    for seq, (customer, ts, amount) in enumerate(
        [("a", "10:00", 1.0), ("b", "10:00", 2.0), ("a", "10:01", 3.0), ("b", "09:59", 4.0)]
    ):
        event = {"event_type": "orders", "order_id": "o-1", "customer_id": customer,
                 "order_ts": f"2026-11-22T{ts}:00Z", "op": "u", "amount": amount}  # fmt: skip
        rows.append((bytearray(json.dumps(event).encode()), "events", "pk", SHARD_0, str(seq),
                     None, None, None))  # fmt: skip
    valid = split_batch(spark.createDataFrame(rows, KINESIS_SCHEMA), {"orders": spec}).valid
    winners = {r["customer_id"]: r["amount"] for r in dedupe(valid["orders"], spec).collect()}
    assert winners == {"a": 3.0, "b": 2.0}
