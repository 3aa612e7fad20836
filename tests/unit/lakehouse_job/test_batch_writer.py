"""One micro-batch into every sink, with the sinks faked (lakehouse_job.batch_writer)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from lakehouse_job import sinks
from lakehouse_job.batch_writer import BatchWriter, sink_names
from lakehouse_job.hudi_options import SinkSettings, compaction_options, table_path
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables.declarations import TABLES_YAML, Tables, load_tables

pytestmark = pytest.mark.unit

SHARD = "shardId-000000000000"
ARRIVAL = datetime(2026, 11, 22, 19, 0, 5, tzinfo=UTC)
SINK = SinkSettings(
    base_path="s3a://bucket/warehouse/db.db",
    raw_base_path="s3a://bucket/raw",
    database="db",
    metastore_uri="thrift://metastore:9083",
)


def order(order_id: str, ts: str) -> dict[str, Any]:
    return {
        "event_type": "orders",
        "order_id": order_id,
        "amount": 1.5,
        "order_ts": f"2026-11-22T{ts}Z",
        "op": "u",
    }


def tick(event_id: str) -> dict[str, Any]:
    return {
        "event_type": "ticker",
        "event_id": event_id,
        "ticker": "ACME",
        "price": 10.0,
        "event_time": "2026-11-22T19:00:00Z",
    }


# Three orders (two of one key), one tick, and a record that is not JSON.
MIXED: list[dict[str, Any] | bytes] = [
    order("o-1", "10:00:00"),
    order("o-1", "10:01:00"),
    order("o-2", "10:00:00"),
    tick("t-1"),
    b"not json",
]


def micro_batch(spark: SparkSession, payloads: list[dict[str, Any] | bytes]) -> DataFrame:
    """Kinesis source rows; the position in the list becomes the sequence number."""
    rows = []
    for seq, payload in enumerate(payloads, start=1):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        rows.append((bytearray(data), "events", "pk", SHARD, str(seq), ARRIVAL, None, None))
    return spark.createDataFrame(rows, KINESIS_SCHEMA)


@dataclass(frozen=True)
class Call:
    """One faked sink write: which sink, which table, its sync flag, how many rows."""

    sink: str
    table: str
    sync: bool | None
    rows: int
    batch_id: int | None = None


class FakeSinks:
    """Records every write in submission order; `fail` names a table whose write raises."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.fail: str | None = None
        self._lock = threading.Lock()

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)
        if call.table == self.fail:
            raise RuntimeError(f"write to {call.table} failed")

    def write_hudi(
        self, rows: DataFrame, spec: Any, table_type: Any, sink: SinkSettings, sync: bool = True
    ) -> None:
        self._record(Call("hudi", spec.table_name(table_type), sync, rows.count()))

    def write_raw_json(self, rows: DataFrame, spec: Any, sink: SinkSettings, batch_id: int) -> None:
        self._record(Call("json", f"{spec.table}_json", None, rows.count(), batch_id))

    def write_quarantine(self, rows: DataFrame, sink: SinkSettings, sync: bool = True) -> None:
        self._record(Call("quarantine", "quarantine", sync, rows.count()))


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables(TABLES_YAML)


def patch_sinks(mp: pytest.MonkeyPatch) -> FakeSinks:
    fake = FakeSinks()
    mp.setattr(sinks, "write_hudi", fake.write_hudi)
    mp.setattr(sinks, "write_raw_json", fake.write_raw_json)
    mp.setattr(sinks, "write_quarantine", fake.write_quarantine)
    return fake


@pytest.fixture
def fake_sinks(monkeypatch: pytest.MonkeyPatch) -> FakeSinks:
    return patch_sinks(monkeypatch)


@dataclass
class TwoBatches:
    writer: BatchWriter
    first: list[Call]
    second: list[Call]
    metrics: list[dict[str, Any]]


@pytest.fixture(scope="module")
def two_batches(spark: SparkSession, tables: Tables, tmp_path_factory: Any) -> Iterator[TwoBatches]:
    """The same mixed batch written twice by one writer (fast profile, its default of one
    write at a time, so the sinks run in submission order)."""
    metrics_file = Path(tmp_path_factory.mktemp("metrics")) / "metrics.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        fake = patch_sinks(mp)
        writer = BatchWriter(tables, SINK, str(metrics_file))
        batch = micro_batch(spark, MIXED)
        writer(batch, 7)
        first = list(fake.calls)
        fake.calls.clear()
        writer(batch, 8)
        lines = metrics_file.read_text().splitlines()
        yield TwoBatches(writer, first, list(fake.calls), [json.loads(line) for line in lines])


def test_every_copy_on_write_table_first_then_merge_on_read_json_copies_quarantine(
    two_batches: TwoBatches,
) -> None:
    assert [(c.sink, c.table) for c in two_batches.first] == [
        ("hudi", "hudi_orders_cow"),
        ("hudi", "stock_ticks_cow"),
        ("hudi", "hudi_orders_mor"),
        ("hudi", "stock_ticks_mor"),
        ("json", "hudi_orders_json"),
        ("json", "stock_ticks_json"),
        ("quarantine", "quarantine"),
    ]


def test_hudi_gets_deduplicated_rows_and_json_every_valid_row(two_batches: TwoBatches) -> None:
    rows = {(c.sink, c.table): c.rows for c in two_batches.first}
    assert rows[("hudi", "hudi_orders_cow")] == rows[("hudi", "hudi_orders_mor")] == 2
    assert rows[("json", "hudi_orders_json")] == 3
    assert rows[("hudi", "stock_ticks_cow")] == rows[("json", "stock_ticks_json")] == 1
    assert rows[("quarantine", "quarantine")] == 1
    assert {c.batch_id for c in two_batches.first if c.sink == "json"} == {7}
    assert {c.batch_id for c in two_batches.second if c.sink == "json"} == {8}


def test_metrics_line_per_batch(two_batches: TwoBatches) -> None:
    assert [m["batch_id"] for m in two_batches.metrics] == [7, 8]
    first = two_batches.metrics[0]
    assert first["records"] == 5
    assert first["valid"] == {"orders": 3, "ticker": 1}
    assert first["quarantined"] == 1
    assert set(first["seconds"]) == {
        "hudi_orders_cow",
        "hudi_orders_mor",
        "stock_ticks_cow",
        "stock_ticks_mor",
        "hudi_orders_json",
        "stock_ticks_json",
        "quarantine",
        "read_parse",
        "batch",
    }
    assert first["finished_at"] > 0
    # Per sink, when its write ended; the batch's oldest record's Kinesis arrival.
    assert set(first["written_at"]) == set(first["seconds"]) - {"read_parse", "batch"}
    assert set(first["written_at"]) <= set(sink_names(two_batches.writer.specs))  # declared
    assert first["quarantined_by_type"] == {"unknown": 1}  # b"not json" has no event type
    assert first["quarantined_by_kind"] == {"not_json": 1}  # the ledger's kind of its reason
    assert first["records_by_shard"] == {"events": {SHARD: 5}}
    assert first["oldest_arrival"] == ARRIVAL.timestamp()
    assert first["oldest_arrival"] <= min(first["written_at"].values())
    # Every record by its arrival second, the unparseable one too.
    assert first["arrivals"] == {str(int(ARRIVAL.timestamp())): 5}


def test_metastore_sync_on_first_commit_only(two_batches: TwoBatches) -> None:
    first = {c.table: c.sync for c in two_batches.first if c.sink != "json"}
    second = {c.table: c.sync for c in two_batches.second if c.sink != "json"}
    assert set(first.values()) == {True}
    assert set(first) == set(second)
    # Same tables and the same quarantine date: nothing new to register.
    assert set(second.values()) == {False}


def test_mor_tables_registered_with_compaction_options(
    two_batches: TwoBatches, tables: Tables
) -> None:
    expected = {
        table_path(SINK, tables[e], "MERGE_ON_READ"): compaction_options(tables[e], SINK)
        for e in ("orders", "ticker")
    }
    assert two_batches.writer.mor_tables == expected


def test_no_quarantine_write_without_bad_records(
    spark: SparkSession, tables: Tables, fake_sinks: FakeSinks
) -> None:
    writer = BatchWriter(tables, SINK, None, parallel_writes=1)
    writer(micro_batch(spark, [tick("t-1")]), 0)
    assert [(c.sink, c.table) for c in fake_sinks.calls] == [
        ("hudi", "stock_ticks_cow"),
        ("hudi", "stock_ticks_mor"),
        ("json", "stock_ticks_json"),
    ]


class FakeReports:
    """What CommitMetricsReporter would hold: a report for each Hudi table written."""

    def __init__(self) -> None:
        self.taken: list[str] = []

    def take(self, table: str) -> dict[str, int]:
        self.taken.append(table)
        if table.endswith("_json"):  # the raw copy is not a Hudi table
            return {}
        return {"commit.duration": 120, "commit.totalRecordsWritten": 2}


def test_hudi_s_report_of_each_write_goes_into_the_metrics_line(
    spark: SparkSession, tables: Tables, fake_sinks: FakeSinks, tmp_path: Path
) -> None:
    metrics_file = tmp_path / "metrics.jsonl"
    reports = FakeReports()
    writer = BatchWriter(tables, SINK, str(metrics_file), parallel_writes=2, hudi_reports=reports)
    writer(micro_batch(spark, MIXED), 0)
    [line] = [json.loads(line) for line in metrics_file.read_text().splitlines()]
    assert sorted(reports.taken) == sorted(line["written_at"])  # after each write
    assert set(line["hudi"]) == {
        "hudi_orders_cow",
        "hudi_orders_mor",
        "stock_ticks_cow",
        "stock_ticks_mor",
        "quarantine",
    }
    assert line["hudi"]["hudi_orders_cow"]["commit.duration"] == 120


def test_a_failing_write_fails_the_batch_and_changes_no_state(
    spark: SparkSession, tables: Tables, fake_sinks: FakeSinks, tmp_path: Path
) -> None:
    metrics_file = tmp_path / "metrics.jsonl"
    writer = BatchWriter(tables, SINK, str(metrics_file), parallel_writes=3)
    fake_sinks.fail = "stock_ticks_mor"
    with pytest.raises(RuntimeError, match="stock_ticks_mor failed"):
        writer(micro_batch(spark, MIXED), 0)
    # The other writes still ran (side by side), but nothing counts as committed.
    assert len(fake_sinks.calls) == 7
    assert writer.mor_tables == {}
    for name in ("hudi_orders_cow", "hudi_orders_mor", "stock_ticks_cow", "stock_ticks_mor"):
        assert writer.sync.needed(name)
    assert writer.sync.needed("quarantine", ["2026-11-22"])
    assert not metrics_file.exists()


class FakeTurns:
    """Records which table's turn each write ran in (WriteTurns needs ZooKeeper)."""

    def __init__(self, sinks_seen: FakeSinks) -> None:
        self.sinks_seen = sinks_seen
        self.held: list[tuple[str, int]] = []  # (table, the sink calls made inside its turn)

    @contextmanager
    def turn(self, table: str) -> Iterator[float]:
        before = len(self.sinks_seen.calls)
        yield 0.0
        self.held.append((table, len(self.sinks_seen.calls) - before))

    def close(self) -> None:
        pass


def test_each_hudi_write_runs_in_its_tables_turn_the_raw_copy_needs_none(
    spark: SparkSession, tables: Tables, fake_sinks: FakeSinks
) -> None:
    turns = FakeTurns(fake_sinks)
    writer = BatchWriter(tables, SINK, None, turns=turns)
    writer(micro_batch(spark, MIXED), 0)
    # One write inside each Hudi table's turn; the raw copy's folders are per batch.
    assert turns.held == [
        ("hudi_orders_cow", 1),
        ("stock_ticks_cow", 1),
        ("hudi_orders_mor", 1),
        ("stock_ticks_mor", 1),
        ("quarantine", 1),
    ]
