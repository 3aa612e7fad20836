"""Re-read one entry's raw JSON copy into its Hudi tables, under today's declaration.

A field a producer sent before it was declared is in the raw copy (`_raw_payload`, the
record as it came off the stream), not in the Hudi tables. Once it is declared, this
sends every raw record of the entry (or those that arrived from `--from` on) through the
job's own parse, validate, dedupe and Hudi writes, at its original stream position: the
precombine rules decide as they did the first time (an event never beats a later one),
so a run changes only what the new declaration adds, and running it twice changes
nothing more. The raw copy itself is not written again.

With `--from-quarantine` the records come from the quarantine instead: those of the entry's
event type, refused when they arrived (lakehouse_job.redrive).

Launched by `lakehouse backfill` (which never imports this module). It takes the
warehouse's writer lock like the streaming job: stop the job first.

    python -m lakehouse_job.backfill --event-type orders [--from 2026-11-20T00:00:00Z]
    python -m lakehouse_job.backfill --event-type orders --from-quarantine
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from lakehouse_job import redrive, write_turns
from lakehouse_job.batch_writer import BatchWriter
from lakehouse_job.cli import build_parser
from lakehouse_job.hudi_options import SinkSettings, lock_folder, written_tables
from lakehouse_job.index_guard import check_index_layouts
from lakehouse_job.index_layout import IndexLayoutRefused
from lakehouse_job.schema_evolution import plan_tables
from lakehouse_job.sinks import raw_json_path
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_job.startup import EXIT_REFUSED_CONFIG
from lakehouse_job.table_config import TableConfigRefused
from lakehouse_job.table_config_guard import check_table_configs
from lakehouse_job.writer_lock import WriterLock, WriterLockError
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec, load_tables
from lakehouse_tables.schema_change import SchemaChangeRefused

log = logging.getLogger("lakehouse_job.backfill")

# What the raw copy keeps of each record's place and text (parse.raw_rows writes them).
RAW_SCHEMA = StructType(
    [
        StructField(columns.RAW_PAYLOAD, StringType()),
        StructField(columns.INGEST_SHARD, StringType()),
        StructField(columns.INGEST_SEQ, StringType()),
        StructField(columns.INGEST_SUBSEQ, LongType()),
        StructField(columns.ARRIVAL_TS, StringType()),
    ]
)


def as_source_rows(raw: DataFrame, arrived_from: str | None, stream: str | None) -> DataFrame:
    """Raw-copy lines -> rows shaped like the Kinesis source's, at their first position.

    `stream` is the entry's declared stream, if any: its records are routed by it (a
    pattern matches itself)."""
    arrival = F.to_timestamp(F.col(columns.ARRIVAL_TS))
    if arrived_from:
        raw = raw.where(arrival >= F.to_timestamp(F.lit(arrived_from)))
    return raw.select(
        F.encode(F.col(columns.RAW_PAYLOAD), "UTF-8").alias("data"),
        F.lit(stream or "backfill").alias("stream"),
        F.lit("").alias("partitionKey"),
        F.col(columns.INGEST_SHARD).alias("shardId"),
        F.col(columns.INGEST_SEQ).alias("sequenceNumber"),
        arrival.alias("approximateArrivalTimestamp"),
        F.col(columns.INGEST_SUBSEQ).alias("subSequenceNumber"),
        F.lit(None).cast(StringType()).alias("aggregateError"),
    ).select(*[F.col(f.name).cast(f.dataType) for f in KINESIS_SCHEMA.fields])


def write_through_the_job(
    spark: SparkSession, spec: TableSpec, sink: SinkSettings, rows: DataFrame
) -> None:
    """`rows` (the Kinesis source's shape) through the job's batch writer, into the entry's
    Hudi tables (and the quarantine), not the raw copy."""
    plans = plan_tables(spark, {spec.event_type: spec}, sink, "the tables file")
    turns = write_turns.for_sink(spark._jvm, sink.lock_url, lock_folder(sink), sink.lock_session_ms)
    writer = BatchWriter(
        {spec.event_type: spec},
        sink,
        metrics_file=None,
        column_orders={name: plan.column_order for name, plan in plans.items()},
        raw_copy=False,
        turns=turns,
    )
    try:
        writer(rows, batch_id=0)
    finally:
        turns.close()


def backfill(
    spark: SparkSession, spec: TableSpec, sink: SinkSettings, arrived_from: str | None
) -> int:
    """Returns the number of raw records sent through the job's batch writer."""
    source = raw_json_path(sink, spec)
    raw = (
        spark.read.schema(RAW_SCHEMA)
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.json")
        .json(source)
    )
    rows = as_source_rows(raw, arrived_from, spec.stream).persist()
    try:
        count = rows.count()
        log.info("backfill of %s: %d raw records from %s", spec.event_type, count, source)
        if count:
            write_through_the_job(spark, spec, sink, rows)
        return count
    finally:
        rows.unpersist()


def redrive_quarantine(
    spark: SparkSession, spec: TableSpec, sink: SinkSettings, arrived_from: str | None
) -> tuple[int, int]:
    """(quarantined records sent through the job's batch writer, those it accepted, which
    left the quarantine)."""
    found = redrive.quarantined(spark, sink, spec)
    if found is None:
        return 0, 0
    if arrived_from:
        found = found.where(F.col(columns.Q_ARRIVAL_TS) >= F.to_timestamp(F.lit(arrived_from)))
    # Read once, before the writes change the quarantine they come from.
    rows = redrive.as_source_rows(found, spec).localCheckpoint()
    count = rows.count()
    log.info("backfill of %s: %d quarantined records", spec.event_type, count)
    if not count:
        return 0, 0
    write_through_the_job(spark, spec, sink, rows)
    copied = redrive.copy_to_raw(spark, sink, spec, rows)
    log.info(
        "backfill of %s: %d accepted records added to the raw JSON copy", spec.event_type, copied
    )
    keys = redrive.accepted_keys(rows, {spec.event_type: spec})
    return count, redrive.remove_from_quarantine(spark, sink, spec, keys)


def backfill_parser() -> argparse.ArgumentParser:
    """The job's options, and which entry to refill from where."""
    parser = build_parser()
    parser.prog = "lakehouse-backfill"
    parser.description = __doc__
    parser.add_argument("--event-type", required=True, help="the tables file entry to refill")
    parser.add_argument(
        "--from",
        dest="arrived_from",
        help="only records that arrived at or after this time (ISO 8601; default: all)",
    )
    parser.add_argument(
        "--from-quarantine",
        action="store_true",
        help="send the entry's quarantined records through the job again instead of its raw "
        "copy (lakehouse_job.redrive): those accepted now leave the quarantine",
    )
    return parser


def sink_settings(args: argparse.Namespace) -> SinkSettings:
    """Where the backfill writes: the job's tables, registered where there is a metastore."""
    return SinkSettings(
        base_path=args.warehouse,
        raw_base_path=args.raw,
        database=args.database,
        metastore_uri=args.metastore_uri or "",
        hive_sync=bool(args.metastore_uri),
        profile=args.profile,
        checkpoint=args.checkpoint,
        lock_url=args.lock_url or "",
        lock_session_ms=args.lock_session_ms,
    )


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    args = backfill_parser().parse_args(argv)
    specs = load_tables(args.tables)
    if args.event_type not in specs:
        log.error("%s declares no entry %r (it has %s)", args.tables, args.event_type, list(specs))
        return 2
    sink = sink_settings(args)
    # With a lock every writer shares, the backfill writes beside the job, each write in
    # its table's turn; without one, only one process may write the warehouse.
    lock = None if sink.lock_url else WriterLock(args.warehouse)
    try:
        if lock:
            lock.acquire()
    except WriterLockError as error:
        log.error(
            "%s (stop the streaming job first: without a shared lock (--lock-url) a backfill "
            "cannot write the job's tables beside it)",
            error,
        )
        return 3
    try:
        builder = SparkSession.builder.appName("lakehouse-backfill")
        if args.master:
            builder = builder.master(args.master)
        spark = builder.enableHiveSupport().getOrCreate()
        tables = written_tables({args.event_type: specs[args.event_type]}, sink)
        check_index_layouts(spark, tables)
        check_table_configs(spark, tables)
        if args.from_quarantine:
            sent, accepted = redrive_quarantine(
                spark, specs[args.event_type], sink, args.arrived_from
            )
            log.info(
                "backfill done: %d quarantined records of %s, %d accepted (they left the "
                "quarantine), %d still refused",
                sent,
                args.event_type,
                accepted,
                sent - accepted,
            )
            return 0
        count = backfill(spark, specs[args.event_type], sink, args.arrived_from)
        log.info("backfill done: %d records of %s", count, args.event_type)
        return 0
    except (SchemaChangeRefused, IndexLayoutRefused, TableConfigRefused) as refused:
        log.error("%s", refused)
        return EXIT_REFUSED_CONFIG
    finally:
        if lock:
            lock.release()


if __name__ == "__main__":
    sys.exit(main())
