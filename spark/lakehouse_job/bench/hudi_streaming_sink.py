"""The yardstick: Hudi's own Structured Streaming sink instead of the job's foreachBatch.

`writeStream.format("hudi")` (HoodieStreamingSink, in the Hudi Spark bundle) keeps one
write client across micro-batches and runs Merge-on-Read compaction asynchronously
itself. Fed here by the same Kinesis source, the same parse/validate and the same table
options (hudi_options) as the job, one streaming query per Hudi table, so that the
benchmark (`lakehouse bench --profiles fast,hudi-sink`) compares the two write paths on
the same events. What it cannot do as the job does: in-batch dedupe (Hudi combines by
event time instead) and metastore sync only when needed (it syncs every commit).

Two yardsticks (`every_output`): the Hudi tables alone, or every output the job writes,
as a user of Hudi's sink would get them: one more query for the quarantine table (Hudi's
sink, the job's quarantine options) and one per type for the raw JSON copy (Spark's own
JSON file sink, the job's columns and partitions). Every query reads and parses the
stream itself; the job reads it once for all of its outputs. A benchmark tool, not a
second way to run the job.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from lakehouse_job.hudi_options import (
    SinkSettings,
    hudi_options,
    quarantine_options,
    quarantine_table_path,
    table_path,
)
from lakehouse_job.parse import classify, quarantine_rows, raw_rows, valid_rows
from lakehouse_job.progress import ProgressLog
from lakehouse_job.sinks import RAW_TIMESTAMP_FORMAT, raw_json_path, with_quarantine_date
from lakehouse_tables.declarations import TableSpec


def start_queries(
    source: DataFrame,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    checkpoint: str,
    trigger_seconds: float,
    available_now: bool = False,
    every_output: bool = False,
) -> list[StreamingQuery]:
    """One query per Hudi table (`every_output`: and per raw copy, and the quarantine's);
    `available_now`: each drains the stream and stops."""
    trigger = (
        {"availableNow": True}
        if available_now
        else {"processingTime": f"{trigger_seconds} seconds"}
    )
    classified = classify(source, specs)
    queries = []

    def start(
        name: str,
        rows: DataFrame,
        fmt: str,
        options: Mapping[str, str],
        path: str,
        partition_by: tuple[str, ...] = (),
    ) -> None:
        writer = rows.writeStream.format(fmt).options(**options)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        queries.append(
            # Hadoop reads a colon in a relative path segment as a URI scheme.
            writer.option(
                "checkpointLocation", f"{checkpoint.rstrip('/')}/{name.replace(':', '-')}"
            )
            .queryName(name)
            .outputMode("append")
            .trigger(**trigger)
            .start(path)
        )

    for event_type, spec in specs.items():
        rows = valid_rows(classified, spec)
        for table_type in spec.table_types:
            name = spec.table_name(table_type)
            options = hudi_options(spec, table_type, sink) | _sink_options(name)
            start(f"{event_type}:{name}", rows, "hudi", options, table_path(sink, spec, table_type))
    if every_output:
        for event_type, spec in specs.items():
            # What BatchWriter's raw copy writes, appended by Spark's file sink.
            start(
                f"{event_type}:raw",
                raw_rows(classified, spec),
                "json",
                {"timestampFormat": RAW_TIMESTAMP_FORMAT},
                f"{raw_json_path(sink, spec)}/file-sink",
                partition_by=(spec.partition_name,),
            )
        quarantined = with_quarantine_date(quarantine_rows(classified))
        options = quarantine_options(sink) | _sink_options("quarantine")
        start("quarantine", quarantined, "hudi", options, quarantine_table_path(sink))
    return queries


def _sink_options(name: str) -> dict[str, str]:
    # Hudi's sink must combine in-batch duplicates itself (the job dedupes first) and
    # schedules its own async compaction.
    return {
        "hoodie.combine.before.upsert": "true",
        "hoodie.compact.schedule.inline": "false",
        "hoodie.datasource.compaction.async.enable": "true",
        "hoodie.datasource.write.streaming.checkpoint.identifier": name,
    }


def run(
    spark: SparkSession,
    source: DataFrame,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    checkpoint: str,
    trigger_seconds: float,
    metrics_file: str | None,
    available_now: bool = False,
    every_output: bool = False,
) -> list[StreamingQuery]:
    queries = start_queries(
        source, specs, sink, checkpoint, trigger_seconds, available_now, every_output
    )
    if metrics_file:
        spark.streams.addListener(ProgressLog(metrics_file, counting_query=queries[0].name))
    return queries
