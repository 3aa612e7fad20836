"""The job's own series for Prometheus, served by the driver (`--metrics-port`).

Spark's metrics (its PrometheusServlet on the UI port, spark-defaults.conf) say how Spark
runs; these say what the pipeline does, per micro-batch and per sink:

    lakehouse_job_batches_total                      micro-batches written
    lakehouse_job_records_total{event_type,outcome}  records read: valid or quarantined
                                                     (event_type "unknown" when unparseable)
    lakehouse_job_shard_records_total{stream,shard}  records read from each shard
    lakehouse_job_quarantined_total{kind}            quarantined records by the ledger's
                                                     kind of reason (not_json, missing_key,
                                                     ...: lakehouse_tables.rules)
    lakehouse_job_stage_seconds{stage}               seconds per stage of a batch: the read
                                                     and parse (read_parse), each sink write
                                                     (hudi_orders_cow, ..._json, quarantine)
                                                     and the whole batch
    lakehouse_job_sink_writes_total{sink}            writes (Hudi commits) per sink
    lakehouse_job_sink_last_write_timestamp_seconds{sink}
    lakehouse_job_freshness_seconds{sink}            per batch, from the oldest record's
                                                     Kinesis arrival to its write in that sink
    lakehouse_job_last_batch_timestamp_seconds
    lakehouse_job_last_batch_records                 the last micro-batch's records
    lakehouse_job_last_batch_seconds{stage}          its seconds per stage (lakehouse top)
    lakehouse_job_kinesis_millis_behind_latest       the source's lag (largest shard)
    lakehouse_job_kinesis_shards_with_lag
    lakehouse_job_kinesis_shard_millis_behind_latest{stream,shard}
                                                     each shard's lag, as Kinesis reports it
                                                     to CloudWatch (GetRecords.MillisBehindLatest)
    lakehouse_job_kinesis_missing_streams            streams asked for that do not exist
    lakehouse_job_hudi_metric{table,metric}          Hudi's own metrics of the table's last
                                                     write (lakehouse_job.hudi_metrics)
    lakehouse_job_compactions_total{table,result}    Merge-on-Read compactions: ok, failed
    lakehouse_job_compaction_failures_in_a_row{table}
                                                     failed since the table's last success
    lakehouse_job_compactions_pending{table}         plans not yet completed (the backlog)
    lakehouse_job_start_time_seconds                 when this run of the job started

Everything is updated on the driver from what the job already computes (the batch's
counts, the sinks' timings, the source's progress), so serving it costs no Spark work;
only the compaction backlog is asked of Hudi's timeline, by the compaction thread after
each round, off the write path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from lakehouse_tables import rules

log = logging.getLogger(__name__)

# A batch takes seconds; a stalled one minutes.
SECONDS_BUCKETS = (0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300, 600)
UNKNOWN_EVENT_TYPE = "unknown"
OTHER_KIND = "other"
QUARANTINE_KINDS = (*dict.fromkeys(kind for _, kind in rules.REASON_KINDS), OTHER_KIND)


def quarantine_kind(reason: str) -> str:
    """The ledger's kind of a quarantine reason (lakehouse_tables.rules); "other" for one
    the rules lack: a label must never fail a batch."""
    try:
        return rules.ledger_kind(reason)
    except ValueError:
        return OTHER_KIND


@dataclass
class BatchMetrics:
    """What one micro-batch did and how long each sink took, in seconds (also one JSON
    line of the job's metrics file, which the benchmark reads)."""

    batch_id: int
    records: int = 0
    valid: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    quarantined_by_type: dict[str, int] = field(default_factory=dict)  # "unknown": unparsed
    quarantined_by_kind: dict[str, int] = field(default_factory=dict)  # quarantine_kind
    records_by_shard: dict[str, dict[str, int]] = field(default_factory=dict)  # stream -> ...
    seconds: dict[str, float] = field(default_factory=dict)
    written_at: dict[str, float] = field(default_factory=dict)  # sink -> epoch seconds
    oldest_arrival: float | None = None  # epoch seconds of the batch's oldest record
    # Records per Kinesis arrival second (epoch seconds, as a string key): with written_at,
    # each record's freshness to within a second (lakehouse.bench.freshness).
    arrivals: dict[str, int] = field(default_factory=dict)
    # Hudi table -> what Hudi reported of its write (lakehouse_job.hudi_metrics), e.g.
    # {"commit.duration": 2140, "commit.totalRecordsWritten": 80000}: durations in ms.
    hudi: dict[str, dict[str, int]] = field(default_factory=dict)
    finished_at: float = 0.0


class JobMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.batches = Counter("lakehouse_job_batches", "Micro-batches written", registry=r)
        self.records = Counter(
            "lakehouse_job_records",
            "Records read, by event type and outcome (valid, quarantined)",
            ["event_type", "outcome"],
            registry=r,
        )
        self.shard_records = Counter(
            "lakehouse_job_shard_records",
            "Records read from each stream's shard (valid and quarantined)",
            ["stream", "shard"],
            registry=r,
        )
        self.quarantined = Counter(
            "lakehouse_job_quarantined",
            "Records quarantined, by the ledger's kind of reason (lakehouse_tables.rules)",
            ["kind"],
            registry=r,
        )
        self.stage_seconds = Histogram(
            "lakehouse_job_stage_seconds",
            "Seconds per stage of a micro-batch: read and parse, each sink write, the whole batch",
            ["stage"],
            buckets=SECONDS_BUCKETS,
            registry=r,
        )
        self.sink_writes = Counter(
            "lakehouse_job_sink_writes", "Writes (Hudi commits) per sink", ["sink"], registry=r
        )
        self.sink_last_write = Gauge(
            "lakehouse_job_sink_last_write_timestamp_seconds",
            "When each sink last finished a write",
            ["sink"],
            registry=r,
        )
        self.freshness = Histogram(
            "lakehouse_job_freshness_seconds",
            "Per batch: seconds from its oldest record's Kinesis arrival to its write in a sink",
            ["sink"],
            buckets=SECONDS_BUCKETS,
            registry=r,
        )
        self.last_batch = Gauge(
            "lakehouse_job_last_batch_timestamp_seconds",
            "When the last micro-batch finished",
            registry=r,
        )
        self.last_batch_records = Gauge(
            "lakehouse_job_last_batch_records", "Records of the last micro-batch", registry=r
        )
        self.last_batch_seconds = Gauge(
            "lakehouse_job_last_batch_seconds",
            "Seconds per stage of the last micro-batch: read and parse, each sink write, "
            "the whole batch",
            ["stage"],
            registry=r,
        )
        self.behind_latest = Gauge(
            "lakehouse_job_kinesis_millis_behind_latest",
            "How far the source is behind the newest record of its most lagging shard (ms)",
            registry=r,
        )
        self.shards_with_lag = Gauge(
            "lakehouse_job_kinesis_shards_with_lag", "Shards not caught up", registry=r
        )
        self.shard_behind_latest = Gauge(
            "lakehouse_job_kinesis_shard_millis_behind_latest",
            "How far each shard's last read was behind its newest record (ms)",
            ["stream", "shard"],
            registry=r,
        )
        self.missing_streams = Gauge(
            "lakehouse_job_kinesis_missing_streams",
            "Streams the job is asked to read that do not exist",
            registry=r,
        )
        self.hudi = Gauge(
            "lakehouse_job_hudi_metric",
            "Hudi's own metric of the table's last write, as Hudi reports it (HoodieMetrics: "
            "commit.duration in ms, commit.totalRecordsWritten, deltacommit.*, clean.*, ...)",
            ["table", "metric"],
            registry=r,
        )
        self.compactions = Counter(
            "lakehouse_job_compactions",
            "Merge-on-Read compactions by table and result (ok, failed)",
            ["table", "result"],
            registry=r,
        )
        self.compactions_pending = Gauge(
            "lakehouse_job_compactions_pending",
            "Merge-on-Read compaction plans of the table not yet completed",
            ["table"],
            registry=r,
        )
        self.compaction_failures_in_a_row = Gauge(
            "lakehouse_job_compaction_failures_in_a_row",
            "Merge-on-Read compactions of the table failed since its last success",
            ["table"],
            registry=r,
        )
        start = Gauge(
            "lakehouse_job_start_time_seconds", "When this run of the job started", registry=r
        )
        start.set(time.time())

    def declare(self, event_types: Iterable[str], sinks: Iterable[str]) -> None:
        """Every series the run can have, at 0 from its start: a counter first seen at its
        first batch's value has no increase for rate() (the first batch would vanish)."""
        for event_type in (*event_types, UNKNOWN_EVENT_TYPE):
            for outcome in ("valid", "quarantined"):
                self.records.labels(event_type, outcome)
        for kind in QUARANTINE_KINDS:
            self.quarantined.labels(kind)
        # The histograms too: a restarted job's first batch is often its stalest.
        for stage in ("read_parse", "batch"):
            self.stage_seconds.labels(stage)
        for sink in sinks:
            self.sink_writes.labels(sink)
            self.stage_seconds.labels(sink)
            self.freshness.labels(sink)

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        """Serve /metrics on host:port from a daemon thread. A port in use (another job
        on this machine, a test's) leaves the metrics unserved, never the job stopped."""
        try:
            start_http_server(port, addr=host, registry=self.registry)
        except OSError as error:
            log.warning(
                "metrics not served: %s:%d is not free (%s); another job may hold it. Set "
                "--metrics-port (LAKEHOUSE_JOB_METRICS_PORT) to a free port, or 0",
                host,
                port,
                error,
            )
            return
        log.info("metrics for Prometheus on http://%s:%d/metrics", host, port)

    def observe_batch(self, batch: BatchMetrics) -> None:
        self.batches.inc()
        for event_type, n in batch.valid.items():
            self.records.labels(event_type, "valid").inc(n)
        for event_type, n in batch.quarantined_by_type.items():
            self.records.labels(event_type, "quarantined").inc(n)
        for kind, n in batch.quarantined_by_kind.items():
            self.quarantined.labels(kind).inc(n)
        for stream, shards in batch.records_by_shard.items():
            for shard, n in shards.items():
                self.shard_records.labels(stream, shard).inc(n)
        self.last_batch_seconds.clear()  # only the stages this batch ran
        for stage, seconds in batch.seconds.items():
            self.stage_seconds.labels(stage).observe(seconds)
            self.last_batch_seconds.labels(stage).set(seconds)
        self.last_batch_records.set(batch.records)
        for sink, at in batch.written_at.items():
            self.sink_writes.labels(sink).inc()
            self.sink_last_write.labels(sink).set(at)
            if batch.oldest_arrival is not None:
                self.freshness.labels(sink).observe(max(0.0, at - batch.oldest_arrival))
        for table, reported in batch.hudi.items():
            for metric, value in reported.items():
                self.hudi.labels(table, metric).set(value)
        self.last_batch.set(batch.finished_at)

    def observe_lag(self, lag: Mapping[str, Any]) -> None:
        """`lag`: lakehouse_job.status.source_lag of the query's last progress."""
        self.behind_latest.set(lag["max_millis_behind_latest"])
        self.shards_with_lag.set(lag["shards_with_lag"])
        # Shards come and go (resharding, streams added): only the ones read now.
        self.shard_behind_latest.clear()
        for stream, shards in lag.get("millis_behind_latest_by_shard", {}).items():
            for shard, millis in shards.items():
                self.shard_behind_latest.labels(stream, shard).set(millis)
        self.missing_streams.set(len(lag["missing_streams"]))

    def observe_compaction(self, table: str, failures_in_a_row: int, pending: int | None) -> None:
        """One compaction round of `table`: `failures_in_a_row` is 0 when it succeeded;
        `pending`: its plans not yet completed (None: unknown, the last figure stays)."""
        self.compactions.labels(table, "failed" if failures_in_a_row else "ok").inc()
        self.compaction_failures_in_a_row.labels(table).set(failures_in_a_row)
        if pending is not None:
            self.compactions_pending.labels(table).set(pending)
