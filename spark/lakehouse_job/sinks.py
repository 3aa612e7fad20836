"""Writers for one micro-batch: Hudi tables, the raw JSON copy, the quarantine table.

Each write is idempotent for a replayed batch (same batch id, same rows): Hudi
upserts by key, the raw JSON copy overwrites its batch's own folder, quarantine
rows are keyed by their Kinesis position.
"""

from __future__ import annotations

import hashlib

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lakehouse_job.hudi_options import (
    SinkSettings,
    hudi_options,
    quarantine_options,
    quarantine_table_path,
    table_path,
)
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec, TableType


def write_hudi(
    rows: DataFrame, spec: TableSpec, table_type: TableType, sink: SinkSettings, sync: bool = True
) -> None:
    """Upsert one batch of (deduplicated) rows into one Hudi table; `sync`: then update
    the metastore."""
    (
        rows.write.format("hudi")
        .options(**hudi_options(spec, table_type, sink, sync))
        .mode("append")
        .save(table_path(sink, spec, table_type))
    )


def raw_json_path(sink: SinkSettings, spec: TableSpec) -> str:
    return f"{sink.raw_base_path.rstrip('/')}/{spec.table}"


def raw_batch_path(sink: SinkSettings, spec: TableSpec, batch_id: int) -> str:
    """One batch's folder: named by the checkpoint and the batch id, so a replay of the
    batch rewrites its own folder and a new checkpoint (whose batch ids start at 0 again)
    never overwrites an older one's."""
    scope = hashlib.sha256(sink.checkpoint.encode()).hexdigest()[:12]
    return f"{raw_json_path(sink, spec)}/checkpoint={scope}/batch_id={batch_id}"


# The raw copy's event times: ISO 8601 with milliseconds and the offset, as producers send them.
RAW_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"


def write_raw_json(rows: DataFrame, spec: TableSpec, sink: SinkSettings, batch_id: int) -> None:
    """Every valid record of the batch as JSON lines (parse.raw_rows): the declared
    columns, the baseline the Hudi tables are compared with, its Kinesis shard and
    sequence number, and the record's original text. One folder per batch, overwritten
    on replay, so never duplicated."""
    write_raw_json_to(rows, spec, raw_batch_path(sink, spec, batch_id))


def write_raw_json_to(rows: DataFrame, spec: TableSpec, path: str) -> None:
    """parse.raw_rows as JSON lines into `path` (replaced), in the raw copy's layout."""
    (
        rows.write.mode("overwrite")
        .partitionBy(spec.partition_name)
        .option("timestampFormat", RAW_TIMESTAMP_FORMAT)
        .json(path)
    )


def with_quarantine_date(rows: DataFrame) -> DataFrame:
    """Quarantine rows (parse.quarantine_rows) with their partition column: the arrival
    date, not the time of writing, so a replayed batch lands on the same keys in the
    same partitions."""
    return rows.withColumn(
        columns.Q_DATE,
        F.date_format(F.coalesce(F.col(columns.Q_ARRIVAL_TS), F.current_timestamp()), "yyyy-MM-dd"),
    )


def write_quarantine(rows: DataFrame, sink: SinkSettings, sync: bool = True) -> None:
    """Upsert `with_quarantine_date` rows into the quarantine table."""
    (
        rows.write.format("hudi")
        .options(**quarantine_options(sink, sync))
        .mode("append")
        .save(quarantine_table_path(sink))
    )
