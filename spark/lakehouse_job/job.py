"""The streaming job: Kinesis -> parse/validate/dedupe -> Hudi CoW + MoR, raw JSON, quarantine.

Run it with `lakehouse run` (local mode) or spark-submit (compose). Settings come
from the command line, falling back to the environment the launchers set
(KINESIS_ENDPOINT, HMS_URI, LAKEHOUSE_BUCKET, ...).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQueryListener

from lakehouse_job import driver_class_archive, envelope, sinks
from lakehouse_job.checkpoint_sinks import (
    CheckpointSinks,
    CheckpointSinksRefused,
    check_checkpoint_sinks,
    record_checkpoint_sinks,
)
from lakehouse_job.compaction import CompactionRunner
from lakehouse_job.crash_points import CrashPoints
from lakehouse_job.dedupe import dedupe
from lakehouse_job.hadoop_conf import YarnDefaults
from lakehouse_job.hudi_metrics import HudiReports, Reports
from lakehouse_job.hudi_options import (
    CATALOGS,
    PROFILES,
    SinkSettings,
    compaction_options,
    table_path,
    written_tables,
)
from lakehouse_job.hudi_timeline import has_commit, timeline_files
from lakehouse_job.index_guard import check_index_layouts
from lakehouse_job.index_layout import IndexLayoutRefused
from lakehouse_job.metrics import (
    UNKNOWN_EVENT_TYPE,
    BatchMetrics,
    JobMetrics,
    quarantine_kind,
)
from lakehouse_job.parse import REASON, split_batch
from lakehouse_job.plan_stages import per_session
from lakehouse_job.progress import ProgressLog
from lakehouse_job.schema_evolution import plan_tables
from lakehouse_job.source_streams import StreamListError, parse_stream_list
from lakehouse_job.status import LagListener, StatusFile
from lakehouse_job.table_config import TableConfigRefused
from lakehouse_job.table_config_guard import check_table_configs
from lakehouse_job.table_recovery import clear_unfinished_tables
from lakehouse_job.table_widening import apply_widenings
from lakehouse_job.trino_views import QueryViews, query_objects, trino_executor
from lakehouse_job.writer_lease import WriterLease, lease_location, s3_client_from_env
from lakehouse_job.writer_lock import WriterLock, WriterLockError
from lakehouse_tables import columns
from lakehouse_tables.declarations import (
    TablesConfigError,
    TableSpec,
    default_tables_path,
    load_tables,
)
from lakehouse_tables.schema_change import SchemaChangeRefused

log = logging.getLogger("lakehouse_job")

# The declared tables cannot be applied to the existing ones (schema_change): a restart
# cannot fix that, so the supervisor (lakehouse.keepalive) does not restart on it.
EXIT_REFUSED_CONFIG = 5
HOLD_ON_REFUSAL_ENV = "LAKEHOUSE_HOLD_ON_REFUSAL"


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def _stream_list_arg(value: str) -> str:
    try:
        parse_stream_list(value)
    except StreamListError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _name_value_arg(value: str) -> tuple[str, str]:
    name, sep, option = value.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {value!r}")
    return name.strip(), option.strip()


def build_parser() -> argparse.ArgumentParser:
    bucket = _env("LAKEHOUSE_BUCKET", "lakehouse")
    database = _env("LAKEHOUSE_DATABASE", "lakehouse")
    p = argparse.ArgumentParser(prog="lakehouse-job", description=__doc__)
    p.add_argument(
        "--stream",
        type=_stream_list_arg,
        default=_env("KINESIS_STREAM_NAME", "events"),
        help="the Kinesis stream, or several separated by commas (a stream added later is "
        "read from its trim horizon; one left out keeps its position in the checkpoint)",
    )
    p.add_argument(
        "--kinesis-endpoint",
        default=_env("KINESIS_ENDPOINT"),
        help="Kinesis API URL; omit for real AWS",
    )
    p.add_argument("--region", default=_env("AWS_REGION", "us-east-1"))
    p.add_argument(
        "--starting-position",
        choices=["TRIM_HORIZON", "LATEST"],
        default="TRIM_HORIZON",
        help="where to start when there is no checkpoint",
    )
    p.add_argument(
        "--max-records-per-shard",
        type=int,
        default=20000,
        help="upper bound of records read per shard per micro-batch",
    )
    p.add_argument(
        "--kinesis-option",
        action="append",
        default=[],
        type=_name_value_arg,
        metavar="NAME=VALUE",
        help="an option of the Kinesis source (spark/kinesis-source/README.md), e.g. "
        "readAhead=false; repeatable",
    )
    p.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        type=_name_value_arg,
        metavar="KEY=VALUE",
        help="a Spark setting for this run, over spark-defaults.conf (e.g. "
        "spark.sql.shuffle.partitions=4; spark.driver.extraJavaOptions replaces the "
        "defaults' JVM options in local mode); repeatable",
    )
    p.add_argument(
        "--hudi-option",
        action="append",
        default=[],
        type=_name_value_arg,
        metavar="KEY=VALUE",
        help="a Hudi write setting for every table of this run, over the job's own (e.g. "
        "hoodie.parquet.compression.codec=zstd), and for the compaction of Merge-on-Read "
        "tables where it is one the two must share (merging, locking); repeatable",
    )
    p.add_argument(
        "--tables",
        default=str(default_tables_path()),
        help="table declarations (default: $LAKEHOUSE_TABLES, else the packaged tables.yaml)",
    )
    p.add_argument("--database", default=database)
    p.add_argument("--metastore-uri", default=_env("HMS_URI"))
    p.add_argument(
        "--catalog",
        choices=CATALOGS,
        default=_env("LAKEHOUSE_CATALOG", "hive") or "hive",
        help="where the tables are registered: hive (--metastore-uri; none: not registered) "
        "or glue (AWS Glue Data Catalog of --region)",
    )
    p.add_argument(
        "--glue-endpoint",
        default=_env("GLUE_ENDPOINT"),
        help="Glue API URL; omit for AWS's own",
    )
    p.add_argument(
        "--trino-url",
        default=_env("TRINO_URL"),
        help="Trino, where the job creates the live views and raw JSON tables (empty: none)",
    )
    p.add_argument("--warehouse", default=f"s3a://{bucket}/warehouse/{database}.db")
    p.add_argument("--raw", default=f"s3a://{bucket}/raw")
    p.add_argument("--checkpoint", default=f"s3a://{bucket}/checkpoints/lakehouse-job")
    p.add_argument("--trigger-seconds", type=float, default=5.0)
    p.add_argument(
        "--available-now",
        action="store_true",
        help="process what the stream holds now, then stop (tests, demo)",
    )
    p.add_argument("--compaction-delta-commits", type=int, default=5)
    p.add_argument("--compaction-interval", type=float, default=20.0)
    p.add_argument(
        "--batch-timeout",
        type=float,
        default=600.0,
        help="seconds one trigger may run before the job gives up on a hung dependency "
        "and exits 4 (the supervisor restarts it; the batch is replayed)",
    )
    p.add_argument(
        "--max-compaction-failures",
        type=int,
        default=10,
        help="consecutive failed compactions of one table that stop the job (exit 1)",
    )
    p.add_argument(
        "--status-file",
        default=_env("LAKEHOUSE_JOB_STATUS_FILE"),
        help="JSON the job keeps current: Kinesis lag, compactions (lakehouse status)",
    )
    p.add_argument(
        "--writer-lease",
        action=argparse.BooleanOptionalAction,
        default=(_env("LAKEHOUSE_JOB_WRITER_LEASE") or "").lower() in ("1", "true", "yes"),
        help="also hold a lease on S3 beside the checkpoint and the warehouse, so that jobs "
        "on other hosts are refused too (lakehouse_job.writer_lease; the aws target's "
        "default; LAKEHOUSE_JOB_WRITER_LEASE)",
    )
    p.add_argument(
        "--final-compaction",
        action="store_true",
        help="after the query stops, compact every MoR table fully",
    )
    p.add_argument(
        "--parallel-writes",
        type=int,
        default=1,
        help="sink writes of one micro-batch run side by side (default 1: one after another, "
        "the Copy-on-Write tables first; on 2 cores, side by side was no faster, cost more "
        "CPU and left the tables less fresh: docs/performance.md)",
    )
    p.add_argument(
        "--profile",
        choices=PROFILES,
        default="fast",
        help="table layout and write settings; 'baseline' is the first release's (benchmarks)",
    )
    p.add_argument(
        "--writer",
        choices=["foreach-batch", "hudi-streaming-sink", "hudi-streaming-sink-all"],
        default="foreach-batch",
        help="benchmark yardsticks: hudi-streaming-sink, Hudi's own sink, one query per Hudi "
        "table; hudi-streaming-sink-all, one per output the job writes (the quarantine table "
        "too, and the raw JSON copy through Spark's file sink)",
    )
    p.add_argument("--master", default=_env("SPARK_MASTER"))
    p.add_argument(
        "--metrics-port",
        type=int,
        default=int(_env("LAKEHOUSE_JOB_METRICS_PORT", "0") or 0),
        help="serve the job's own metrics for Prometheus on this port (0: not served)",
    )
    p.add_argument(
        "--metrics-host",
        default=_env("LAKEHOUSE_JOB_METRICS_HOST", "127.0.0.1"),
        help="address the metrics are served on (compose: 0.0.0.0)",
    )
    p.add_argument(
        "--metrics-file",
        default=_env("LAKEHOUSE_METRICS_FILE"),
        help="append one JSON line per micro-batch (the benchmark reads it)",
    )
    p.add_argument(
        "--no-hudi-metrics",
        dest="hudi_metrics",
        action="store_false",
        help="leave Hudi's own metrics of each write off (in the metrics line and series)",
    )
    return p


@dataclass(frozen=True)
class Write:
    """One sink write of a micro-batch; `synced`: (table, partitions) it registers in the
    metastore, if it syncs."""

    name: str
    run: Callable[[], None]
    synced: tuple[str, tuple[str, ...]] | None = None


class MetastoreSync:
    """Decides which commits also update the metastore.

    Hive sync costs ~1 s a table (schema and partitions read back from the metastore
    and the timeline), and only a new table, a new schema or a new partition changes
    what it writes. So a table is synced on its first commit of each run (which also
    catches up anything a crashed run committed but never synced) and when a commit
    brings a partition not synced before; unpartitioned tables only on the first.
    Profile 'baseline' syncs every commit, as the first release did.
    """

    def __init__(self, every_commit: bool = False) -> None:
        self.every_commit = every_commit
        self._synced: dict[str, set[str]] = {}

    def needed(self, table: str, partitions: Iterable[str] = ()) -> bool:
        if self.every_commit or table not in self._synced:
            return True
        return not set(partitions) <= self._synced[table]

    def done(self, table: str, partitions: Iterable[str] = ()) -> None:
        self._synced.setdefault(table, set()).update(partitions)


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
    ) -> None:
        self.specs = specs
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
            # Written in this order: every type's Copy-on-Write table first (what readers
            # wait for), then the Merge-on-Read ones, the raw JSON copies, the quarantine.
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
                    tables[table_type].append(
                        Write(
                            name,
                            partial(sinks.write_hudi, rows, spec, table_type, self.sink, sync),
                            synced=(name, ()) if sync else None,
                        )
                    )
                    if table_type == "MERGE_ON_READ":
                        path = table_path(self.sink, spec, table_type)
                        mor_tables[path] = compaction_options(spec, self.sink)
            writes = [*tables["COPY_ON_WRITE"], *tables["MERGE_ON_READ"], *copies]
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
            with self.write_lock:
                self._run_writes(writes, metrics)
                self.mor_written_at.update(dict.fromkeys(mor_tables, time.monotonic()))
            # Only now does each table exist for the compaction thread to compact.
            self.mor_tables.update(mor_tables)
            for write in writes:
                if write.synced:
                    self.sync.done(*write.synced)
            self.crash.reached("before-commit")
        finally:
            for frame in cached:
                frame.unpersist()
        metrics.seconds["batch"] = round(time.monotonic() - started, 3)
        metrics.finished_at = time.time()
        self._report(metrics)

    def _quarantine_write(self, dated: DataFrame) -> Write:
        """`dated`: sinks.with_quarantine_date rows."""
        dates = [r[0] for r in dated.select(columns.Q_DATE).distinct().collect()]
        sync = self.sync.needed("quarantine", dates)
        return Write(
            "quarantine",
            partial(sinks.write_quarantine, dated, self.sink, sync),
            synced=("quarantine", tuple(dates)) if sync else None,
        )

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
        """Run the sinks' writes, `parallel_writes` at a time. One at a time by default: on
        2 cores, side by side they contended for the driver and the cores, each took twice as
        long, the batch was no shorter, the job spent 4-13 % more CPU per event and the first
        table's commit came later (docs/performance.md). The batch fails (and is replayed
        after restart) if any write fails."""

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


def existing_mor_tables(
    spark: SparkSession, specs: Mapping[str, TableSpec], sink: SinkSettings
) -> dict[str, dict[str, str]]:
    """Declared Merge-on-Read tables on storage with a commit (a table created by a run
    that died before its first commit has nothing to compact): path -> its compaction
    options."""
    found = {}
    for spec in specs.values():
        if "MERGE_ON_READ" in spec.table_types:
            path = table_path(sink, spec, "MERGE_ON_READ")
            if has_commit(timeline_files(spark, path) or []):
                found[path] = compaction_options(spec, sink)
    return found


def kinesis_stream(spark: SparkSession, args: argparse.Namespace) -> DataFrame:
    """One Kinesis source for every stream of --stream (source_streams)."""
    reader = (
        spark.readStream.format("kinesis")
        .option("streamName", ",".join(parse_stream_list(args.stream)))
        .option("region", args.region)
        .option("startingPosition", args.starting_position)
        .option("maxRecordsPerShard", str(args.max_records_per_shard))
    )
    if args.kinesis_endpoint:
        reader = reader.option("endpointUrl", args.kinesis_endpoint)
    for name, value in args.kinesis_option:
        reader = reader.option(name, value)
    return reader.load()


def build_session(args: argparse.Namespace) -> SparkSession:
    driver_class_archive.prepare()
    builder = SparkSession.builder.appName("lakehouse-streaming-job")
    if args.master:
        builder = builder.master(args.master)
    for key, value in args.spark_conf:
        builder = builder.config(key, value)
    if args.catalog == "glue":
        # The job writes and reads its tables by path; Spark's own catalog is not Glue (that
        # needs EMR's client), so it must not start an empty local Hive metastore either.
        return builder.config("spark.sql.catalogImplementation", "in-memory").getOrCreate()
    return builder.enableHiveSupport().getOrCreate()


class GracefulStop:
    """SIGTERM/SIGINT ask the query to stop after the micro-batch in flight."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._request)
        signal.signal(signal.SIGINT, self._request)

    def _request(self, signum: int, _frame: object) -> None:
        log.info("signal %s: stopping after the current micro-batch", signum)
        self.requested = True


class TriggerWatchdog:
    """Ends the process when one trigger (reading, planning or writing a micro-batch) runs
    longer than `timeout_s`: a hung metastore or Kinesis engine would otherwise hold the
    query for many minutes with nothing logged. The batch was not committed, so the
    restarted job replays it."""

    def __init__(self, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout_s = timeout_s
        self.clock = clock
        self.active_since: float | None = None

    def overdue(self, trigger_active: bool) -> float | None:
        """Seconds the current trigger has run, when that is past the timeout."""
        if not trigger_active:
            self.active_since = None
            return None
        now = self.clock()
        if self.active_since is None:
            self.active_since = now
        running = now - self.active_since
        return running if running > self.timeout_s else None

    def check(self, trigger_active: bool) -> None:
        running = self.overdue(trigger_active)
        if running is not None:
            log.error(
                "a micro-batch has run %.0f s (--batch-timeout %.0f s): a dependency hangs; "
                "exiting 4 so that the job restarts and replays the batch",
                running,
                self.timeout_s,
            )
            logging.shutdown()
            os._exit(4)  # the query cannot be stopped while it hangs; the JVM follows


def run(args: argparse.Namespace) -> int:
    try:
        specs = load_tables(args.tables)
    except TablesConfigError as invalid:  # a restart cannot fix it: not restarted (exit 5)
        return _refuse(None, GracefulStop(), f"the tables file is not valid: {invalid}")
    sink = SinkSettings(
        base_path=args.warehouse,
        raw_base_path=args.raw,
        database=args.database,
        metastore_uri=args.metastore_uri or "",
        compaction_delta_commits=args.compaction_delta_commits,
        hive_sync=args.catalog == "glue" or bool(args.metastore_uri),
        profile=args.profile,
        checkpoint=args.checkpoint,
        catalog=args.catalog,
        region=args.region,
        glue_endpoint=args.glue_endpoint or "",
        hudi_metrics=args.hudi_metrics,
        extra_options=tuple(args.hudi_option),
    )
    try:  # every write's options, built before Spark starts: a bad --hudi-option is refused
        tables = written_tables(specs, sink)
    except IndexLayoutRefused as refused:
        return _refuse(None, GracefulStop(), str(refused))
    # The JVM that build_session starts inherits SIGTERM as ignored, so a SIGTERM to the
    # whole process group (the supervisor, docker stop) reaches only this driver, which
    # then stops between micro-batches instead of the JVM dying in the middle of one.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    spark = build_session(args)
    yarn_defaults = YarnDefaults(spark)
    yarn_defaults.drop()
    crash = CrashPoints.from_env()
    crash.attach(spark)
    stop = GracefulStop()
    if args.writer.startswith("hudi-streaming-sink"):
        return _run_hudi_streaming_sink(spark, args, specs, sink, stop)
    sinks_asked = CheckpointSinks(args.warehouse, args.raw)
    try:
        check_checkpoint_sinks(spark, args.checkpoint, sinks_asked)
    except CheckpointSinksRefused as refused:
        return _refuse(spark, stop, str(refused))
    clear_unfinished_tables(spark, [table.path for table in tables])
    # Both checks before refusing: a user sees every change the tables cannot take at once.
    refusals: list[str] = []
    try:
        plans = plan_tables(spark, specs, sink, args.tables)
    except SchemaChangeRefused as refused:
        refusals.append(str(refused))
    try:
        check_index_layouts(spark, tables)
    except IndexLayoutRefused as refused:
        refusals.append(str(refused))
    try:
        check_table_configs(spark, tables)
    except TableConfigRefused as refused:
        refusals.append(str(refused))
    if refusals:
        return _refuse(spark, stop, "\n".join(refusals))
    record_checkpoint_sinks(spark, args.checkpoint, sinks_asked)
    job_metrics = JobMetrics()
    job_metrics.declare(specs, sink_names(specs))
    if args.metrics_port:
        job_metrics.serve(args.metrics_port, args.metrics_host)
    writer = BatchWriter(
        specs,
        sink,
        args.metrics_file,
        args.parallel_writes,
        crash,
        column_orders={name: plan.column_order for name, plan in plans.items()},
        job_metrics=job_metrics,
        hudi_reports=HudiReports(spark._jvm) if sink.hudi_metrics else None,
        before_batch=yarn_defaults.drop,
    )
    # Tables an earlier run wrote are compacted from the start: a plan it left, or the final
    # compaction, must not wait for this run to bring new rows to the table.
    writer.mor_tables.update(existing_mor_tables(spark, specs, sink))
    status = StatusFile(args.status_file)
    compactor = CompactionRunner(
        spark,
        lambda: writer.mor_tables,
        args.compaction_interval,
        args.max_compaction_failures,
        status,
        last_writes=lambda: writer.mor_written_at,
        write_lock=writer.write_lock,
        on_compaction=job_metrics.observe_compaction,
    )
    apply_widenings(spark, specs, sink, plans, compactor.compact_table_fully, crash)
    compactor.start()
    stream_writer = (
        kinesis_stream(spark, args)
        .writeStream.foreachBatch(writer)
        .option("checkpointLocation", args.checkpoint)
        .queryName("lakehouse")
    )
    if args.available_now:
        stream_writer = stream_writer.trigger(availableNow=True)
    else:
        stream_writer = stream_writer.trigger(processingTime=f"{args.trigger_seconds} seconds")
    lag = LagListener(status, on_lag=job_metrics.observe_lag)
    # In the order the JVM calls them: the lag listener last, so that its end is theirs.
    listeners: list[StreamingQueryListener] = []
    if args.metrics_file:
        listeners.append(ProgressLog(args.metrics_file))
    listeners.append(lag)
    for listener in listeners:
        spark.streams.addListener(listener)
    query = stream_writer.start()
    log.info(
        "streaming from %s into %s (checkpoint %s)", args.stream, args.warehouse, args.checkpoint
    )
    watchdog = TriggerWatchdog(args.batch_timeout)
    views = QueryViews(
        query_objects(specs, sink) if args.trino_url and sink.hive_sync else [],
        trino_executor(args.trino_url or "", args.region),
        sink.database,
    )
    while query.isActive:
        if stop.requested or compactor.failed:
            _stop_between_batches(spark, query)
            break
        views.poll()
        watchdog.check(bool(query.status.get("isTriggerActive")))
        query.awaitTermination(1)
    detach_listeners(spark, listeners, lag.terminated)
    compactor.stop()
    views.finish()  # a short run (--available-now) may end before its first attempt
    if compactor.failed:
        log.error("stopping: %s", compactor.failed)
        return 1
    if args.final_compaction:
        compactor.compact_fully()
    error = query.exception()
    if error is not None:
        log.error("the streaming query failed: %s", error)
        return 1
    return 0


def detach_listeners(
    spark: SparkSession,
    listeners: Sequence[StreamingQueryListener],
    ended: threading.Event,
    timeout_s: float = 10,
) -> None:
    """Once the query's end has reached the Python listeners (`ended`; at most `timeout_s`),
    removes them. The driver's Python exits soon after, and an event still on its way to
    one then failed in the JVM with py4j stack traces in the log (ERROR
    StreamingQueryListenerBus at the end of every --available-now run), the last batch's
    progress line and lag lost with it."""
    if not ended.wait(timeout_s):
        log.warning("the query's end did not reach its listeners in %s s; removed", timeout_s)
    for listener in listeners:
        spark.streams.removeListener(listener)


def _refuse(spark: SparkSession | None, stop: GracefulStop, error: str) -> int:
    """A configuration the job cannot apply: logged, nothing written, exit 5."""
    log.error("%s", error)
    if os.environ.get(HOLD_ON_REFUSAL_ENV) == "1":
        # Compose restarts any failed container, and a restart cannot fix a tables file or
        # a stream list: hold, with the error in the log, until the container is stopped.
        if spark is not None:
            spark.stop()
        log.error("holding until stopped: fix the configuration, then restart the job")
        while not stop.requested:
            time.sleep(1)
    return EXIT_REFUSED_CONFIG


def _run_hudi_streaming_sink(
    spark: SparkSession,
    args: argparse.Namespace,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    stop: GracefulStop,
) -> int:
    from lakehouse_job import hudi_streaming_sink

    queries = hudi_streaming_sink.run(
        spark,
        kinesis_stream(spark, args),
        specs,
        sink,
        args.checkpoint,
        args.trigger_seconds,
        args.metrics_file,
        args.available_now,
        every_output=args.writer == "hudi-streaming-sink-all",
    )
    log.info(
        "streaming from %s into %s with Hudi's streaming sink: %d queries (%s)",
        args.stream,
        args.warehouse,
        len(queries),
        ", ".join(q.name for q in queries),
    )
    # Under --available-now each query stops once it has drained the stream; otherwise
    # one query ending (failed) ends the run.
    running = any if args.available_now else all
    while running(q.isActive for q in queries) and not stop.requested:
        time.sleep(1)
    for query in queries:
        _stop_between_batches(spark, query)
    _deliver_progress(spark)
    errors = [q.exception() for q in queries if q.exception() is not None]
    for error in errors:
        log.error("a streaming query failed: %s", error)
    return 1 if errors else 0


def _deliver_progress(spark: SparkSession, timeout_ms: int = 10_000) -> None:
    """Hand the listeners (ProgressLog: the yardstick's record counts) every progress event
    posted so far: the last ones are still queued when the queries stop, and were lost when
    the driver exited first (a drain benchmark counted 119,620 of 120,000 events)."""
    try:
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(timeout_ms)
    except Exception as error:  # a late progress line is not worth failing the run for
        log.warning("progress events may be missing from the metrics file: %s", error)


def _stop_between_batches(spark: SparkSession, query) -> None:
    """Stop `query` between two micro-batches, and soon: with the source's read gate closed
    (lakehouse.kinesis.ReadGate) a new batch gets no records, so once the batch in flight
    commits the query idles until its next trigger, and is stopped there. Without it, a
    backlog keeps one batch starting as the last commits, and the wait lasts until it is
    drained (minutes, past the supervisor's or `docker stop`'s grace)."""
    jvm = spark._jvm
    assert jvm is not None  # a live session's gateway
    jvm.lakehouse.kinesis.ReadGate.close()
    while query.status.get("isTriggerActive"):
        time.sleep(0.2)
    query.stop()


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    args = build_parser().parse_args(argv)
    # Before anything starts: a second job on this checkpoint, or on these tables (with
    # another checkpoint), must not write at all.
    # This host's flock first: a lease of this host is then a dead predecessor's.
    locks: list[WriterLock | WriterLease] = []
    try:
        for resource in (args.checkpoint, args.warehouse):
            locks.append(WriterLock(resource).acquire())
        if args.writer_lease:
            client = s3_client_from_env()
            for resource in (args.checkpoint, args.warehouse):
                if lease_location(resource) is None:
                    log.info("no writer lease for %s: not on S3 (the flock guards it)", resource)
                    continue
                locks.append(WriterLease(client, resource).acquire())
        return run(args)
    except WriterLockError as error:
        log.error("%s", error)
        return 3
    finally:
        for lock in reversed(locks):
            lock.release()


if __name__ == "__main__":
    code = main()
    driver_class_archive.finish_recording()
    sys.exit(code)
