"""The yardstick: Hudi's own Structured Streaming sink instead of the job's foreachBatch.

`writeStream.format("hudi")` (HoodieStreamingSink, in the Hudi Spark bundle) keeps one
write client across micro-batches and runs Merge-on-Read compaction asynchronously
itself. Fed here by the same Kinesis source, the same parse/validate and the same table
options (hudi_options) as the job, one streaming query per Hudi table, so that the
benchmark (`lakehouse bench --profiles fast,hudi-sink`) compares the two write paths on
the same events. What it cannot do as the job does: in-batch dedupe (Hudi combines by
event time instead), the raw JSON copy, the quarantine table, and metastore sync only
when needed (it syncs every commit). A benchmark tool, not a second way to run the job.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from lakehouse_job.hudi_options import SinkSettings, hudi_options, table_path
from lakehouse_job.parse import classify, valid_rows
from lakehouse_job.progress import ProgressLog
from lakehouse_tables.declarations import TableSpec


def start_queries(
    source: DataFrame,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    checkpoint: str,
    trigger_seconds: float,
    available_now: bool = False,
) -> list[StreamingQuery]:
    """One query per Hudi table; `available_now`: each drains the stream and stops."""
    trigger = (
        {"availableNow": True}
        if available_now
        else {"processingTime": f"{trigger_seconds} seconds"}
    )
    classified = classify(source, specs)
    queries = []
    for event_type, spec in specs.items():
        rows = valid_rows(classified, spec)
        for table_type in spec.table_types:
            name = spec.table_name(table_type)
            options = hudi_options(spec, table_type, sink) | {
                # Hudi's sink must combine in-batch duplicates itself (the job dedupes first)
                # and schedules its own async compaction.
                "hoodie.combine.before.upsert": "true",
                "hoodie.compact.schedule.inline": "false",
                "hoodie.datasource.compaction.async.enable": "true",
                "hoodie.datasource.write.streaming.checkpoint.identifier": name,
            }
            queries.append(
                rows.writeStream.format("hudi")
                .options(**options)
                .option("checkpointLocation", f"{checkpoint.rstrip('/')}/{name}")
                .queryName(f"{event_type}:{name}")
                .outputMode("append")
                .trigger(**trigger)
                .start(table_path(sink, spec, table_type))
            )
    return queries


def run(
    spark: SparkSession,
    source: DataFrame,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    checkpoint: str,
    trigger_seconds: float,
    metrics_file: str | None,
    available_now: bool = False,
) -> list[StreamingQuery]:
    queries = start_queries(source, specs, sink, checkpoint, trigger_seconds, available_now)
    if metrics_file:
        spark.streams.addListener(ProgressLog(metrics_file, counting_query=queries[0].name))
    return queries
