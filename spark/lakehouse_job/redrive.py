"""Send an entry's quarantined records through the job again, once the reason they were
quarantined is gone: an event type declared after its records arrived ("unknown
event_type"), a field's type widened since ("wrong type"), a record rule relaxed.

Each quarantined record of the entry's event type goes through the job's own parse,
validate, dedupe and Hudi writes (lakehouse_job.batch_writer) at its original
stream position, so the precombine rules decide as if it had been accepted when it came:
an older event still loses to a newer one already in the tables. A record accepted now
leaves the quarantine (one Hudi delete of its key, after the tables' writes); one still
refused stays, its reason and time brought up to date. A record accepted now is also
added to the raw JSON copy (a folder of its own per run, `checkpoint=redrive/`), so the
copy keeps every record the tables hold and a backfill from it (`lakehouse backfill`) brings
the redriven ones back too. A run cut short is run again: the upserts are idempotent, the
copy leaves out the records an earlier run already copied, and the delete comes last.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lakehouse_job import envelope
from lakehouse_job.hadoop_files import hadoop_path
from lakehouse_job.hudi_options import SinkSettings, quarantine_options, quarantine_table_path
from lakehouse_job.hudi_timeline import has_commit, timeline_files
from lakehouse_job.parse import REASON, classify, raw_rows
from lakehouse_job.sinks import raw_json_path, write_raw_json_to
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec

KEY = [columns.Q_SHARD_ID, columns.Q_SEQUENCE_NUMBER]
# A raw record's position (parse.raw_rows); the sub-sequence is null outside KPL aggregates.
RAW_POSITION = (columns.INGEST_SHARD, columns.INGEST_SEQ, columns.INGEST_SUBSEQ)


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


def raw_copy_root(sink: SinkSettings, spec: TableSpec) -> str:
    """Where redriven records join the raw copy: beside the job's checkpoint folders."""
    return f"{raw_json_path(sink, spec)}/checkpoint=redrive"


def copy_to_raw(
    spark: SparkSession,
    sink: SinkSettings,
    spec: TableSpec,
    source_rows: DataFrame,
    run_id: str | None = None,
) -> int:
    """Adds the rows the job's checks accept now to the raw JSON copy, as the job would have
    (parse.raw_rows), less those an earlier redrive copied already; how many were added."""
    accepted = raw_rows(classify(source_rows, {spec.event_type: spec}), spec)
    root = raw_copy_root(sink, spec)
    fs, path = hadoop_path(spark, root)
    if fs.exists(path):
        # The schema given: JSON leaves out null fields, so a column of nulls (the
        # sub-sequence of records that were not aggregated) would not be found.
        copied = (
            spark.read.schema(accepted.select(*RAW_POSITION).schema)
            .option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.json")
            .json(root)
            .select(*RAW_POSITION)
        )
        same = [accepted[c].eqNullSafe(copied[c]) for c in RAW_POSITION]
        accepted = accepted.join(copied, same[0] & same[1] & same[2], "left_anti")
    new = accepted.localCheckpoint()
    count = new.count()
    if count:
        run_id = run_id or f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:6]}"
        folder = f"{root}/batch_id={run_id}"
        write_raw_json_to(new, spec, folder)
    return count
