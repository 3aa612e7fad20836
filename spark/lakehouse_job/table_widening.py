"""Widened column types applied at start, before the stream is read: each table with a
widened column is rewritten once in the new types, then the metastore follows.

Why a rewrite: Hudi's writer accepts a long that becomes a double, but not a decimal
with more digits (its Avro check refuses the wider fixed type), and readers take a
Parquet file only in the type it was written in (Trino: "Unsupported Trino column type"
for a bigint file under a double column). So every row is written again, in one
`insert_overwrite_table` commit that replaces every file group at once: a crash before
it completes leaves the table as it was (the next start rewrites again), a crash after
it leaves the table in the new types (the next start plans nothing for it).

Why the metastore separately: Hudi 0.15's hive sync changes a column's type only from
int to bigint and from float to double, and fails the commit's sync for anything else.
`align_metastore` sets each registered table (the table, and a Merge-on-Read table's
`_ro` and `_rt`) to the declared type where that widens what the metastore holds. It
runs at every start, so a crash between the rewrite and the metastore change is
repaired by the next start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lakehouse_job.crash_points import CrashPoints
from lakehouse_job.hudi_options import SinkSettings, hudi_options, merge_options, table_path
from lakehouse_tables.declarations import TableSpec, TableType
from lakehouse_tables.schema_change import (
    HUDI_META_PREFIX,
    TablePlan,
    metastore_widenings,
    row_columns,
)

log = logging.getLogger(__name__)

# The writer's schema checks compare Avro types, in which a decimal of another precision
# is another fixed type: off for this one commit, whose rows are the table's own.
REWRITE_OPTIONS = {
    "hoodie.datasource.write.operation": "insert_overwrite_table",
    "hoodie.avro.schema.validate": "false",
    "hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true",
}
CASCADE = "CASCADE"  # Hive's StatsSetupConst.CASCADE: partitions take the new types too

CompactFully = Callable[[str, Mapping[str, str]], None]


def widened_rows(
    table: DataFrame, column_order: Iterable[str], widened: Mapping[str, str]
) -> DataFrame:
    """The table's rows without Hudi's own columns, in `column_order`, widened columns
    cast to their new types (exact: schema_change.widens allows only such casts)."""
    present = {c for c in table.columns if not c.startswith(HUDI_META_PREFIX)}
    return table.select(
        *(
            F.col(c).cast(widened[c]).alias(c) if c in widened else F.col(c)
            for c in column_order
            if c in present
        )
    )


def rewrite_table(
    spark: SparkSession,
    spec: TableSpec,
    table_type: TableType,
    sink: SinkSettings,
    plan: TablePlan,
    compact_fully: CompactFully,
    crash: CrashPoints,
) -> int:
    """Rewrite one table with its widened columns in their new types; returns its rows."""
    path = table_path(sink, spec, table_type)
    reader = spark.read.format("hudi")
    if table_type == "MERGE_ON_READ":
        # Every delta commit compacted first, by the table's own merge rules (the later
        # event time wins), so the read-optimized view holds each key's final version.
        compact_fully(path, merge_options(spec))
        reader = reader.option("hoodie.datasource.query.type", "read_optimized")
    rows = widened_rows(reader.load(path), plan.column_order, plan.widened).cache()
    try:
        count = rows.count()
        log.info(
            "widening %s (%s): rewriting its %d rows in one commit",
            plan.table,
            ", ".join(f"{c} to {t}" for c, t in plan.widened.items()),
            count,
        )
        (
            rows.write.format("hudi")
            .options(**{**hudi_options(spec, table_type, sink, sync=False), **REWRITE_OPTIONS})
            .mode("append")
            .save(path)
        )
    finally:
        rows.unpersist()
    crash.reached(f"after-rewrite:{plan.table}")
    return count


def metastore_names(spec: TableSpec, table_type: TableType) -> list[str]:
    """The metastore's tables for one Hudi table (hive sync registers a Merge-on-Read
    table as _ro and _rt, and Spark's Hudi writer registers its plain name as well)."""
    name = spec.table_name(table_type)
    return [name, f"{name}_ro", f"{name}_rt"] if table_type == "MERGE_ON_READ" else [name]


def align_metastore(
    spark: SparkSession, specs: Mapping[str, TableSpec], sink: SinkSettings
) -> list[str]:
    """Set every registered table's columns to their declared types where these widen
    the metastore's; returns what was changed, as `table.column type` lines."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its gateway
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    conf.set("hive.metastore.uris", sink.metastore_uri)
    client = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
    changed = []
    try:
        for spec in specs.values():
            declared = dict(row_columns(spec))
            for table_type in spec.table_types:
                for name in metastore_names(spec, table_type):
                    if not client.tableExists(sink.database, name):
                        continue
                    table = client.getTable(sink.database, name)
                    cols = list(table.getSd().getCols())
                    updates = metastore_widenings(
                        [(c.getName(), c.getType()) for c in cols], declared
                    )
                    if not updates:
                        continue
                    for col in cols:
                        if col.getName() in updates:
                            col.setType(updates[col.getName()])
                    context = jvm.org.apache.hadoop.hive.metastore.api.EnvironmentContext()
                    context.putToProperties(CASCADE, "true")
                    client.alter_table_with_environmentContext(sink.database, name, table, context)
                    changed += [f"{name}.{c} {t}" for c, t in updates.items()]
    finally:
        client.close()
    for line in changed:
        log.info("metastore: %s", line)
    return changed


def apply_widenings(
    spark: SparkSession,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    plans: Mapping[str, TablePlan],
    compact_fully: CompactFully,
    crash: CrashPoints,
) -> None:
    """Rewrite every table with a widened column, then align the metastore (every start)."""
    for spec in specs.values():
        for table_type in spec.table_types:
            plan = plans.get(spec.table_name(table_type))
            if plan is not None and plan.widened:
                rewrite_table(spark, spec, table_type, sink, plan, compact_fully, crash)
    # Glue takes the widened columns from Hudi's own sync (it replaces the column list).
    if sink.hive_sync and sink.catalog == "hive":
        align_metastore(spark, specs, sink)
