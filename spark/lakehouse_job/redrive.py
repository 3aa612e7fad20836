"""Send an entry's quarantined records through the job again, once the reason they were
quarantined is gone: an event type declared after its records arrived ("unknown
event_type"), a field's type widened since ("wrong type"), a record rule relaxed.

Each quarantined record of the entry's event type goes through the job's own parse,
validate, dedupe and Hudi writes (lakehouse_job.backfill's BatchWriter) at its original
stream position, so the precombine rules decide as if it had been accepted when it came:
an older event still loses to a newer one already in the tables. A record accepted now
leaves the quarantine (one Hudi delete of its key, after the tables' writes); one still
refused stays, its reason and time brought up to date. A run cut short is run again: the
upserts are idempotent and the delete follows them. The raw JSON copy is not written: it
holds the records as the job accepted them when they arrived.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lakehouse_job import envelope
from lakehouse_job.hudi_options import SinkSettings, quarantine_options, quarantine_table_path
from lakehouse_job.parse import REASON, classify
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_job.table_recovery import has_commit, timeline_files
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec

KEY = [columns.Q_SHARD_ID, columns.Q_SEQUENCE_NUMBER]


def quarantined(spark: SparkSession, sink: SinkSettings, spec: TableSpec) -> DataFrame | None:
    """The quarantine's rows of the entry's event type; None when nothing was quarantined."""
    path = quarantine_table_path(sink)
    if not has_commit(timeline_files(spark, path) or []):
        return None
    table = spark.read.format("hudi").load(path)
    return table.where(F.col(columns.Q_EVENT_TYPE) == spec.event_type)


def as_source_rows(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """Quarantine rows -> rows shaped like the Kinesis source's, at their first position
    (a KPL user record's "sequence/index" split again). Routed by the entry's stream when
    it declares one, as the job routed them."""
    position = F.split(F.col(columns.Q_SEQUENCE_NUMBER), "/")
    return rows.select(
        F.encode(F.col(columns.Q_RAW_PAYLOAD), "UTF-8").alias("data"),
        F.lit(spec.stream or "redrive").alias("stream"),
        F.lit("").alias("partitionKey"),
        F.col(columns.Q_SHARD_ID).alias("shardId"),
        position.getItem(0).alias("sequenceNumber"),
        F.col(columns.Q_ARRIVAL_TS).alias("approximateArrivalTimestamp"),
        position.getItem(1).cast("long").alias("subSequenceNumber"),
        F.lit(None).cast(StringType()).alias("aggregateError"),
    ).select(*[F.col(f.name).cast(f.dataType) for f in KINESIS_SCHEMA.fields])


def accepted_keys(source_rows: DataFrame, specs: Mapping[str, TableSpec]) -> DataFrame:
    """The quarantine keys of the rows the job's checks accept now."""
    classified = classify(source_rows, specs)
    return classified.where(F.col(REASON).isNull()).select(
        F.col(envelope.SHARD).alias(columns.Q_SHARD_ID),
        envelope.position().alias(columns.Q_SEQUENCE_NUMBER),
    )


def remove_from_quarantine(
    spark: SparkSession, sink: SinkSettings, spec: TableSpec, keys: DataFrame
) -> int:
    """Deletes the entry's quarantine rows with these keys; how many."""
    current = quarantined(spark, sink, spec)
    if current is None:
        return 0
    stored = [c for c in current.columns if not c.startswith("_hoodie_")]
    gone = current.join(keys, KEY, "left_semi").select(*stored).localCheckpoint()
    count = gone.count()
    if count:
        options = {
            **quarantine_options(sink, sync=False),
            "hoodie.datasource.write.operation": "delete",
        }
        gone.write.format("hudi").options(**options).mode("append").save(
            quarantine_table_path(sink)
        )
    return count
