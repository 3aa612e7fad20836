"""lakehouse_job.metrics: the job's series as Prometheus reads them."""

from __future__ import annotations

import urllib.request
from dataclasses import replace

import pytest

from lakehouse_job.metrics import BatchMetrics, JobMetrics, quarantine_kind
from tests.support.ports import free_port

pytestmark = pytest.mark.unit


def batch() -> BatchMetrics:
    return BatchMetrics(
        batch_id=3,
        records=10,
        valid={"orders": 7, "ticker": 1},
        quarantined=2,
        quarantined_by_type={"orders": 1, "unknown": 1},
        quarantined_by_kind={"missing_key": 1, "not_json": 1},
        records_by_shard={"events": {"shardId-000000000000": 6, "shardId-000000000001": 4}},
        seconds={"hudi_orders_cow": 1.5, "quarantine": 0.4, "batch": 2.0},
        written_at={"hudi_orders_cow": 1_000.0, "quarantine": 1_001.0},
        oldest_arrival=990.0,
        hudi={"hudi_orders_cow": {"commit.duration": 1_450, "commit.totalRecordsWritten": 7}},
        finished_at=1_002.0,
    )


def test_a_batch_counts_records_stages_writes_and_freshness() -> None:
    m = JobMetrics()
    m.observe_batch(batch())
    m.observe_batch(batch())
    value = m.registry.get_sample_value
    assert value("lakehouse_job_batches_total") == 2
    assert value("lakehouse_job_records_total", {"event_type": "orders", "outcome": "valid"}) == 14
    unparsed = {"event_type": "unknown", "outcome": "quarantined"}
    assert value("lakehouse_job_records_total", unparsed) == 2
    assert value("lakehouse_job_quarantined_total", {"kind": "not_json"}) == 2
    shard = {"stream": "events", "shard": "shardId-000000000001"}
    assert value("lakehouse_job_shard_records_total", shard) == 8
    assert value("lakehouse_job_stage_seconds_count", {"stage": "batch"}) == 2
    assert value("lakehouse_job_stage_seconds_sum", {"stage": "hudi_orders_cow"}) == 3.0
    assert value("lakehouse_job_sink_writes_total", {"sink": "quarantine"}) == 2
    assert value("lakehouse_job_sink_last_write_timestamp_seconds", {"sink": "quarantine"}) == 1_001
    # The oldest record arrived at 990 and was in the CoW table at 1,000: 10 s.
    assert value("lakehouse_job_freshness_seconds_sum", {"sink": "hudi_orders_cow"}) == 20.0
    bucket = "lakehouse_job_freshness_seconds_bucket"
    assert value(bucket, {"sink": "hudi_orders_cow", "le": "7.5"}) == 0
    assert value(bucket, {"sink": "hudi_orders_cow", "le": "10.0"}) == 2
    assert value("lakehouse_job_last_batch_timestamp_seconds") == 1_002
    # The last batch alone, stage by stage (lakehouse top's last batches).
    assert value("lakehouse_job_last_batch_records") == 10
    assert value("lakehouse_job_last_batch_seconds", {"stage": "quarantine"}) == 0.4
    m.observe_batch(replace(batch(), seconds={"batch": 1.0}, records=3))
    assert value("lakehouse_job_last_batch_seconds", {"stage": "quarantine"}) is None
    assert value("lakehouse_job_last_batch_seconds", {"stage": "batch"}) == 1.0
    # Hudi's own figures of the table's last write, as it reported them.
    hudi = {"table": "hudi_orders_cow", "metric": "commit.duration"}
    assert value("lakehouse_job_hudi_metric", hudi) == 1_450


def test_lag_and_compactions() -> None:
    m = JobMetrics()
    by_shard = {"orders": {"shardId-0": 4_500, "shardId-1": 0}}
    m.observe_lag(
        {
            "max_millis_behind_latest": 4_500,
            "shards_with_lag": 3,
            "millis_behind_latest_by_shard": by_shard,
            "missing_streams": ["x"],
        }
    )
    m.observe_compaction("hudi_orders_mor", 0, 0)
    m.observe_compaction("hudi_orders_mor", 1, 1)
    m.observe_compaction("hudi_orders_mor", 2, None)
    value = m.registry.get_sample_value
    assert value("lakehouse_job_kinesis_millis_behind_latest") == 4_500
    assert value("lakehouse_job_kinesis_shards_with_lag") == 3
    assert value("lakehouse_job_kinesis_missing_streams") == 1
    shard = "lakehouse_job_kinesis_shard_millis_behind_latest"
    assert value(shard, {"stream": "orders", "shard": "shardId-0"}) == 4_500
    assert value(shard, {"stream": "orders", "shard": "shardId-1"}) == 0
    # After a reshard only the shards read now are reported.
    resharded = {"orders": {"shardId-2": 10}}
    m.observe_lag(
        {
            "max_millis_behind_latest": 10,
            "shards_with_lag": 1,
            "millis_behind_latest_by_shard": resharded,
            "missing_streams": [],
        }
    )
    assert value(shard, {"stream": "orders", "shard": "shardId-0"}) is None
    assert value(shard, {"stream": "orders", "shard": "shardId-2"}) == 10
    failed = {"table": "hudi_orders_mor", "result": "failed"}
    assert value("lakehouse_job_compactions_total", failed) == 2
    in_a_row = "lakehouse_job_compaction_failures_in_a_row"
    assert value(in_a_row, {"table": "hudi_orders_mor"}) == 2
    assert value("lakehouse_job_compactions_pending", {"table": "hudi_orders_mor"}) == 1
    m.observe_compaction("hudi_orders_mor", 0, 0)  # a success resets it: the alert resolves
    assert value(in_a_row, {"table": "hudi_orders_mor"}) == 0
    assert value("lakehouse_job_compactions_pending", {"table": "hudi_orders_mor"}) == 0


def test_served_over_http_and_a_taken_port_does_not_stop_the_job(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()
    m = JobMetrics()
    m.serve(port)
    m.observe_batch(batch())
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    assert 'lakehouse_job_records_total{event_type="orders",outcome="valid"} 7.0' in text
    JobMetrics().serve(port)  # a second job on the same machine
    assert f"metrics not served: 127.0.0.1:{port} is not free" in caplog.text


def test_declared_series_start_at_zero_so_the_first_batch_counts_in_rate() -> None:
    m = JobMetrics()
    m.declare(["orders"], ["hudi_orders_cow"])
    value = m.registry.get_sample_value
    assert value("lakehouse_job_records_total", {"event_type": "orders", "outcome": "valid"}) == 0
    unparsed = {"event_type": "unknown", "outcome": "quarantined"}
    assert value("lakehouse_job_records_total", unparsed) == 0
    assert value("lakehouse_job_sink_writes_total", {"sink": "hudi_orders_cow"}) == 0
    assert value("lakehouse_job_freshness_seconds_count", {"sink": "hudi_orders_cow"}) == 0
    assert value("lakehouse_job_stage_seconds_count", {"stage": "hudi_orders_cow"}) == 0
    assert value("lakehouse_job_stage_seconds_count", {"stage": "batch"}) == 0
    assert value("lakehouse_job_stage_seconds_count", {"stage": "read_parse"}) == 0
    for kind in ("not_json", "missing_key", "corrupt_aggregate", "other"):
        assert value("lakehouse_job_quarantined_total", {"kind": kind}) == 0


def test_a_quarantine_reason_maps_to_its_ledger_kind_or_other() -> None:
    assert quarantine_kind("not JSON: Unexpected character") == "not_json"
    assert quarantine_kind("missing record key order_id") == "missing_key"
    assert quarantine_kind("a reason no rule has") == "other"
