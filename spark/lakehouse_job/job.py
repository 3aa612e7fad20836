"""The streaming job's entry: Kinesis -> parse/validate/dedupe -> Hudi CoW + MoR, raw JSON,
quarantine. Configuration, start-up checks, the query and its batch writer, stop.

Run it with `lakehouse run` (local mode) or spark-submit (compose): `python -m
lakehouse_job.job`. Exit codes: 0 stopped, 1 failed, 3 another job holds the checkpoint
or warehouse, 4 a trigger hung, 5 a configuration the job cannot apply (startup).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

from lakehouse_job import driver_class_archive, startup, write_turns
from lakehouse_job.batch_writer import BatchWriter, sink_names
from lakehouse_job.checkpoint_sinks import record_checkpoint_sinks
from lakehouse_job.cli import build_parser
from lakehouse_job.compaction import CompactionRunner, existing_mor_tables
from lakehouse_job.config import JobConfig
from lakehouse_job.hudi_metrics import HudiReports
from lakehouse_job.hudi_options import SinkSettings, lock_folder
from lakehouse_job.metrics import JobMetrics
from lakehouse_job.progress import ProgressLog
from lakehouse_job.session import Session, kinesis_stream, start_session
from lakehouse_job.status import LagListener, StatusFile
from lakehouse_job.stopping import (
    GracefulStop,
    TriggerWatchdog,
    detach_listeners,
    stop_between_batches,
)
from lakehouse_job.table_recovery import clear_unfinished_tables
from lakehouse_job.table_widening import apply_widenings
from lakehouse_job.trino_views import QueryViews, query_objects, trino_executor
from lakehouse_tables.declarations import TableSpec
from lakehouse_tables.schema_change import TablePlan

log = logging.getLogger("lakehouse_job")

EXIT_FAILED = 1


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    config = JobConfig.from_args(build_parser().parse_args(argv))
    # Before anything starts: a second job on this checkpoint or these tables must not write.
    return startup.holding_writer_locks(config, run)


def run(config: JobConfig) -> int:
    """Start-up checks, then the query until it stops: the job's exit code."""
    sink = config.sink_settings()
    try:  # before Spark starts
        specs = startup.declared_tables(config.tables)
        tables = startup.write_options(specs, sink)
    except startup.Refusal as refused:
        return startup.refuse(None, GracefulStop(), str(refused))
    session = start_session(config)
    try:
        sinks_asked = startup.check_checkpoint(session.spark, config)
        clear_unfinished_tables(session.spark, [table.path for table in tables])
        plans = startup.plan_stored_tables(session.spark, specs, sink, config.tables, tables)
    except startup.Refusal as refused:
        return startup.refuse(session.spark, session.stop, str(refused))
    record_checkpoint_sinks(session.spark, config.checkpoint, sinks_asked)
    return stream(session, config, specs, sink, plans)


def stream(
    session: Session,
    config: JobConfig,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    plans: Mapping[str, TablePlan],
) -> int:
    """The query, its batch writer and the compaction thread, from start to stop."""
    spark = session.spark
    job_metrics = JobMetrics()
    job_metrics.declare(specs, sink_names(specs))
    if config.metrics_port:
        job_metrics.serve(config.metrics_port, config.metrics_host)
    writer = BatchWriter(
        specs,
        sink,
        config.metrics_file,
        config.parallel_writes,
        session.crash,
        column_orders={name: plan.column_order for name, plan in plans.items()},
        job_metrics=job_metrics,
        hudi_reports=HudiReports(spark._jvm) if sink.hudi_metrics else None,
        before_batch=session.yarn_defaults.drop,
        turns=write_turns.for_sink(
            spark._jvm, sink.lock_url, lock_folder(sink), sink.lock_session_ms
        ),
    )
    # Tables an earlier run wrote are compacted from the start: a plan it left, or the final
    # compaction, must not wait for this run to bring new rows to the table.
    writer.mor_tables.update(existing_mor_tables(spark, specs, sink))
    status = StatusFile(config.status_file)
    compactor = CompactionRunner(
        spark,
        lambda: writer.mor_tables,
        config.compaction_interval,
        config.max_compaction_failures,
        status,
        last_writes=lambda: writer.mor_written_at,
        write_lock=writer.write_lock,
        on_compaction=job_metrics.observe_compaction,
    )
    apply_widenings(spark, specs, sink, plans, compactor.compact_table_fully, session.crash)
    compactor.start()
    query, listeners, lag = start_query(spark, config, writer, status, job_metrics)
    watchdog = TriggerWatchdog(config.batch_timeout)
    views = QueryViews(
        query_objects(specs, sink) if config.trino_url and sink.hive_sync else [],
        trino_executor(config.trino_url or "", config.region),
        sink.database,
    )
    while query.isActive:
        if session.stop.requested or compactor.failed:
            stop_between_batches(spark, query)
            break
        views.poll()
        watchdog.check(bool(query.status.get("isTriggerActive")))
        query.awaitTermination(1)
    detach_listeners(spark, listeners, lag.terminated)
    compactor.stop()
    writer.turns.close()
    views.finish()  # a short run (--available-now) may end before its first attempt
    return finish(config, query, compactor)


def start_query(
    spark: SparkSession,
    config: JobConfig,
    writer: BatchWriter,
    status: StatusFile,
    job_metrics: JobMetrics,
) -> tuple[StreamingQuery, list[StreamingQueryListener], LagListener]:
    """The Kinesis stream into `writer`, micro-batch by micro-batch, with its listeners."""
    stream_writer = (
        kinesis_stream(spark, config)
        .writeStream.foreachBatch(writer)
        .option("checkpointLocation", config.checkpoint)
        .queryName("lakehouse")
    )
    if config.available_now:
        stream_writer = stream_writer.trigger(availableNow=True)
    else:
        stream_writer = stream_writer.trigger(processingTime=f"{config.trigger_seconds} seconds")
    lag = LagListener(status, on_lag=job_metrics.observe_lag)
    # In the order the JVM calls them: the lag listener last, so that its end is theirs.
    listeners: list[StreamingQueryListener] = []
    if config.metrics_file:
        listeners.append(ProgressLog(config.metrics_file))
    listeners.append(lag)
    for listener in listeners:
        spark.streams.addListener(listener)
    query = stream_writer.start()
    log.info(
        "streaming from %s into %s (checkpoint %s)",
        config.stream,
        config.warehouse,
        config.checkpoint,
    )
    return query, listeners, lag


def finish(config: JobConfig, query: StreamingQuery, compactor: CompactionRunner) -> int:
    """After the query stopped: the final compaction if asked, and the exit code."""
    if compactor.failed:
        log.error("stopping: %s", compactor.failed)
        return EXIT_FAILED
    if config.final_compaction:
        compactor.compact_fully()
    error = query.exception()
    if error is not None:
        log.error("the streaming query failed: %s", error)
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    code = main()
    driver_class_archive.finish_recording()
    sys.exit(code)
