"""The foreachBatch function: one micro-batch parsed, validated and deduplicated, then
written to every sink (the Hudi tables, the raw JSON copy, the quarantine) and reported.
The streaming job, the backfill and the redrive all write through it."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lakehouse_job import envelope, sinks
from lakehouse_job.crash_points import CrashPoints
from lakehouse_job.dedupe import dedupe
from lakehouse_job.hudi_metrics import Reports
from lakehouse_job.hudi_options import SinkSettings, compaction_options, table_path
from lakehouse_job.metastore_sync import MetastoreSync
from lakehouse_job.metrics import (
    UNKNOWN_EVENT_TYPE,
    BatchMetrics,
    JobMetrics,
    quarantine_kind,
)
from lakehouse_job.parse import REASON, SplitBatch, split_batch
from lakehouse_job.plan_stages import per_session
from lakehouse_job.write_turns import NoTurns, Turns
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec

# The job's logger: its "batch" lines have always been logged under this name.
log = logging.getLogger("lakehouse_job")


@dataclass(frozen=True)
class Write:
    """One sink write of a micro-batch; `synced`: (table, partitions) it registers in the
    metastore, if it syncs."""

    name: str
    run: Callable[[], None]
    synced: tuple[str, tuple[str, ...]] | None = None


class BatchWriter:
    """The foreachBatch function: one micro-batch into every sink."""

    def __init__(
        self,
        specs: Mapping[str, TableSpec],
        sink: SinkSettings,
        metrics_file: str | None,
        parallel_writes: int = 1,
        crash: CrashPoints | None = None,
        column_orders: Mapping[str, Sequence[str]] | None = None,
        raw_copy: bool = True,
        job_metrics: JobMetrics | None = None,
        hudi_reports: Reports | None = None,
        before_batch: Callable[[], object] | None = None,
        turns: Turns | None = None,
    ) -> None:
        self.specs = specs
        # Each Hudi table's write in its turn among every writer of the table (write_turns).
        self.turns: Turns = turns or NoTurns()
        self.before_batch = before_batch
        self.job_metrics = job_metrics
        self.hudi_reports = hudi_reports
        self.raw_copy = raw_copy  # False: a backfill re-reads the raw copy, never rewrites it
        # Table name -> the columns in the order the table stores them (schema_evolution):
        # a column declared since is appended, whatever its place in the declaration.
        self.column_orders = dict(column_orders or {})
        self.crash = crash or CrashPoints()
        self.sink = sink
        self.parallel_writes = parallel_writes
        self.metrics_file = Path(metrics_file) if metrics_file else None
        self.mor_tables: dict[str, dict[str, str]] = {}  # path -> compaction options
        self.mor_written_at: dict[str, float] = {}  # path -> time.monotonic() of its last write
        # Held while a batch writes: the compaction thread schedules a plan of its own only
        # when no delta commit is in flight (see CompactionRunner.compact_quiet_tables).
        self.write_lock = threading.Lock()
        self.sync = MetastoreSync(every_commit=sink.profile == "baseline")

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        if self.before_batch:
            self.before_batch()
        metrics = BatchMetrics(batch_id)
        split = split_batch(batch, self.specs)
        classified = split.classified.persist()
        cached: list[DataFrame] = [classified]
        try:
            # The first action on the batch: Kinesis read, parse and checks happen here
            # (the frame is cached for the writes).
            begun = time.monotonic()
            counts = self._count(classified, metrics)
            metrics.seconds["read_parse"] = round(time.monotonic() - begun, 3)
            metrics.records = sum(counts.values())
            writes, mor_tables = self._table_writes(split, counts, batch_id, metrics, cached)
            metrics.quarantined_by_type = {
                et or UNKNOWN_EVENT_TYPE: n for (et, ok), n in counts.items() if not ok
            }
            metrics.quarantined = sum(metrics.quarantined_by_type.values())
            if metrics.quarantined:
                # Persisted: its dates are read before the write, and the date falls back
                # to the current time, which must not change between the two.
                dated = sinks.with_quarantine_date(split.quarantine).persist()
                cached.append(dated)
                writes.append(self._quarantine_write(dated))
            self._write(writes, mor_tables, metrics)
        finally:
            for frame in cached:
                frame.unpersist()
        metrics.seconds["batch"] = round(time.monotonic() - started, 3)
        metrics.finished_at = time.time()
        self._report(metrics)

    def _table_writes(
        self,
        split: SplitBatch,
        counts: Mapping[tuple[str | None, bool], int],
        batch_id: int,
        metrics: BatchMetrics,
        cached: list[DataFrame],
    ) -> tuple[list[Write], dict[str, dict[str, str]]]:
        """The writes of every type with valid records, in the order they run: every type's
        Copy-on-Write table first (what readers wait for), then the Merge-on-Read ones, then
        the raw JSON copies; and the Merge-on-Read tables written (path -> compaction
        options). Each type's deduplicated rows are cached (added to `cached`)."""
        tables: dict[str, list[Write]] = {"COPY_ON_WRITE": [], "MERGE_ON_READ": []}
        copies: list[Write] = []
        mor_tables: dict[str, dict[str, str]] = {}
        for event_type, spec in self.specs.items():
            valid = counts.get((event_type, True), 0)
            if not valid:
                continue
            metrics.valid[event_type] = valid
            rows = split.valid[event_type]
            latest = dedupe(rows, spec).persist()
            cached.append(latest)
            if self.raw_copy:
                copies.append(
                    Write(
                        raw_copy_sink(spec),
                        partial(
                            sinks.write_raw_json,
                            split.raw[event_type],
                            spec,
                            self.sink,
                            batch_id,
                        ),
                    )
                )
            for table_type in spec.table_types:
                name = spec.table_name(table_type)
                sync = self.sync.needed(name)
                order = self.column_orders.get(name)
                rows = latest.select(*order) if order else latest
                write = partial(sinks.write_hudi, rows, spec, table_type, self.sink, sync)
                tables[table_type].append(
                    Write(
                        name,
                        partial(self._in_turn, name, write),
                        synced=(name, ()) if sync else None,
                    )
                )
                if table_type == "MERGE_ON_READ":
                    path = table_path(self.sink, spec, table_type)
                    mor_tables[path] = compaction_options(spec, self.sink)
        return [*tables["COPY_ON_WRITE"], *tables["MERGE_ON_READ"], *copies], mor_tables

    def _write(
        self, writes: list[Write], mor_tables: dict[str, dict[str, str]], metrics: BatchMetrics
    ) -> None:
        """Run the batch's writes under the write lock, then tell the compaction thread and
        the metastore sync what they wrote."""
        with self.write_lock:
            self._run_writes(writes, metrics)
            self.mor_written_at.update(dict.fromkeys(mor_tables, time.monotonic()))
        # Only now does each table exist for the compaction thread to compact.
        self.mor_tables.update(mor_tables)
        for write in writes:
            if write.synced:
                self.sync.done(*write.synced)
        self.crash.reached("before-commit")

    def _quarantine_write(self, dated: DataFrame) -> Write:
        """`dated`: sinks.with_quarantine_date rows."""
        dates = [r[0] for r in dated.select(columns.Q_DATE).distinct().collect()]
        sync = self.sync.needed("quarantine", dates)
        write = partial(sinks.write_quarantine, dated, self.sink, sync)
        return Write(
            "quarantine",
            partial(self._in_turn, "quarantine", write),
            synced=("quarantine", tuple(dates)) if sync else None,
        )

    def _in_turn(self, table: str, write: Callable[[], None]) -> None:
        """A Hudi write from its index lookup to its commit, in the table's write turn."""
        with self.turns.turn(table):
            write()

    @staticmethod
    def _count(classified: DataFrame, metrics: BatchMetrics) -> dict[tuple[str | None, bool], int]:
        """Records by (event type, valid), from one pass over the batch that also fills the
        metrics' arrivals, shards and quarantine kinds (a batch spans a few seconds of
        arrivals, a few shards and few distinct reasons, so the grouping keys add groups,
        not passes)."""
        keys, counts = _count_columns()
        rows = classified.groupBy(*keys).agg(*counts).collect()
        by_type: dict[tuple[str | None, bool], int] = {}
        arrivals: dict[str, int] = {}
        for event_type, reason, second, stream, shard, n, oldest in rows:
            ok, n = reason is None, int(n)
            by_type[(event_type, ok)] = by_type.get((event_type, ok), 0) + n
            if not ok:
                kind, kinds = quarantine_kind(reason), metrics.quarantined_by_kind
                kinds[kind] = kinds.get(kind, 0) + n
            if second is not None:
                arrivals[str(second)] = arrivals.get(str(second), 0) + n
            shards = metrics.records_by_shard.setdefault(str(stream), {})
            shards[str(shard)] = shards.get(str(shard), 0) + n
            if oldest is not None:
                metrics.oldest_arrival = min(float(oldest), metrics.oldest_arrival or math.inf)
        metrics.arrivals = dict(sorted(arrivals.items()))
        return by_type

    def _run_writes(self, writes: list[Write], metrics: BatchMetrics) -> None:
        """Run the sinks' writes, `parallel_writes` at a time. One at a time by default: side
        by side they contend for the driver and the cores, so each takes longer, the batch is
        no shorter, every event costs more CPU and the first table's commit comes later
        (docs/performance.md). The batch fails (and is replayed after restart) if any write
        fails."""

        def timed(name: str, write: Callable[[], None]) -> None:
            self.crash.reached(f"before:{name}")
            begun = time.monotonic()
            write()
            metrics.seconds[name] = round(time.monotonic() - begun, 3)
            metrics.written_at[name] = time.time()
            # Hudi reports a table's write when its client closes, before write() returns.
            reported = self.hudi_reports.take(name) if self.hudi_reports else {}
            if reported:
                metrics.hudi[name] = reported
            self.crash.reached(f"after:{name}")

        with ThreadPoolExecutor(max_workers=self.parallel_writes) as pool:
            futures = [pool.submit(timed, w.name, w.run) for w in writes]
        for future in futures:
            future.result()

    def _report(self, metrics: BatchMetrics) -> None:
        if self.job_metrics is not None:
            self.job_metrics.observe_batch(metrics)
        line = json.dumps(metrics.__dict__, sort_keys=True)
        log.info("batch %s", line)
        if self.metrics_file:
            with self.metrics_file.open("a") as out:
                out.write(line + "\n")


@per_session
def _count_columns() -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """BatchWriter._count's grouping keys and aggregates (plan_stages: built once)."""
    arrival = F.col(envelope.ARRIVAL).cast("double")
    keys = (
        F.col(envelope.EVENT_TYPE),
        F.col(REASON),
        F.floor(arrival).alias("second"),
        F.col(envelope.STREAM),
        F.col(envelope.SHARD),
    )
    return keys, (F.count(F.lit(1)), F.min(arrival))


def raw_copy_sink(spec: TableSpec) -> str:
    """The name of an entry's raw JSON write in a batch's timings and metrics."""
    return f"{spec.table}_json"


def sink_names(specs: Mapping[str, TableSpec]) -> list[str]:
    """Every write a batch can make, as BatchWriter names them."""
    return [
        *(spec.table_name(t) for spec in specs.values() for t in spec.table_types),
        *(raw_copy_sink(spec) for spec in specs.values()),
        "quarantine",
    ]
