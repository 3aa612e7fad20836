"""Widened column types applied at start, before the stream is read: each table with a
widened column is rewritten once in the new types, then the catalog follows.

Why a rewrite: Hudi's writer accepts a long that becomes a double, but not a decimal
with more digits (its Avro check refuses the wider fixed type), and readers take a
Parquet file only in the type it was written in (Trino: "Unsupported Trino column type"
for a bigint file under a double column). So every row is written again, in one
`insert_overwrite_table` commit that replaces every file group at once: a crash before
it completes leaves the table as it was (the next start rewrites again), a crash after
it leaves the table in the new types (the next start plans nothing for it).

Why the catalog separately: Hudi 0.15's hive sync changes a column's type only from
int to bigint and from float to double, and fails the commit's sync for anything else;
its Glue sync is the same code (AwsGlueCatalogSyncTool extends HiveSyncTool). So
`align_catalog` sets each registered table (the table, and a Merge-on-Read table's
`_ro` and `_rt`) to the declared type where that widens what the catalog holds, in the
Hive metastore or in Glue. It runs at every start, so a crash between the rewrite and the
catalog change is repaired by the next start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lakehouse_job.crash_points import CrashPoints
from lakehouse_job.hudi_options import (
    SinkSettings,
    compaction_options,
    hudi_options,
    table_path,
)
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
        compact_fully(path, compaction_options(spec, sink))
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


class CatalogColumns(Protocol):
    """One catalog's column types, as `align_catalog` reads and changes them."""

    def columns(self, table: str) -> list[tuple[str, str]] | None:
        """(name, type) of each column; None when the table is not registered."""
        ...

    def set_types(self, table: str, types: Mapping[str, str]) -> None: ...


def align_catalog(catalog: CatalogColumns, specs: Mapping[str, TableSpec]) -> list[str]:
    """Set every registered table's columns to their declared types where these widen
    the catalog's; returns what was changed, as `table.column type` lines."""
    changed = []
    for spec in specs.values():
        declared = dict(row_columns(spec))
        for table_type in spec.table_types:
            for name in metastore_names(spec, table_type):
                columns = catalog.columns(name)
                updates = metastore_widenings(columns or [], declared)
                if updates:
                    catalog.set_types(name, updates)
                    changed += [f"{name}.{c} {t}" for c, t in updates.items()]
    for line in changed:
        log.info("catalog: %s", line)
    return changed


class HiveColumns:
    """The Hive metastore's tables of one database, through the metastore's own client."""

    def __init__(self, spark: SparkSession, sink: SinkSettings) -> None:
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # a live session has its gateway
        conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
        conf.set("hive.metastore.uris", sink.metastore_uri)
        self._jvm = jvm
        self._client = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
        self._database = sink.database

    def columns(self, table: str) -> list[tuple[str, str]] | None:
        if not self._client.tableExists(self._database, table):
            return None
        cols = self._client.getTable(self._database, table).getSd().getCols()
        return [(c.getName(), c.getType()) for c in cols]

    def set_types(self, table: str, types: Mapping[str, str]) -> None:
        found = self._client.getTable(self._database, table)
        for col in found.getSd().getCols():
            if col.getName() in types:
                col.setType(types[col.getName()])
        context = self._jvm.org.apache.hadoop.hive.metastore.api.EnvironmentContext()
        context.putToProperties(CASCADE, "true")
        self._client.alter_table_with_environmentContext(self._database, table, found, context)

    def close(self) -> None:
        self._client.close()


# What GetTable returns that UpdateTable's TableInput takes back.
GLUE_TABLE_INPUT = (
    "Name",
    "Description",
    "Owner",
    "LastAccessTime",
    "LastAnalyzedTime",
    "Retention",
    "StorageDescriptor",
    "PartitionKeys",
    "ViewOriginalText",
    "ViewExpandedText",
    "TableType",
    "Parameters",
    "TargetTable",
)


class GlueColumns:
    """The Glue Data Catalog's tables of one database, through boto3 (the default
    credential chain, AWS_CA_BUNDLE). The Hudi tables are not partitioned
    (hudi_options), so the table's own columns are all there is to change."""

    def __init__(self, client: Any, database: str) -> None:
        self._client = client
        self._database = database

    @classmethod
    def for_sink(cls, sink: SinkSettings) -> GlueColumns:
        import boto3

        client = boto3.client(
            "glue", region_name=sink.region or None, endpoint_url=sink.glue_endpoint or None
        )
        return cls(client, sink.database)

    def _table(self, table: str) -> dict | None:
        try:
            return self._client.get_table(DatabaseName=self._database, Name=table)["Table"]
        except self._client.exceptions.EntityNotFoundException:
            return None

    def columns(self, table: str) -> list[tuple[str, str]] | None:
        found = self._table(table)
        if found is None:
            return None
        return [(c["Name"], c["Type"]) for c in found["StorageDescriptor"]["Columns"]]

    def set_types(self, table: str, types: Mapping[str, str]) -> None:
        found = self._table(table)
        if found is None:
            raise LookupError(f"Glue table {self._database}.{table} vanished while widening")
        table_input = {k: found[k] for k in GLUE_TABLE_INPUT if k in found}
        for column in table_input["StorageDescriptor"]["Columns"]:
            column["Type"] = types.get(column["Name"], column["Type"])
        self._client.update_table(DatabaseName=self._database, TableInput=table_input)

    def close(self) -> None:
        self._client.close()


def align_sink_catalog(
    spark: SparkSession, specs: Mapping[str, TableSpec], sink: SinkSettings
) -> list[str]:
    """`align_catalog` on the sink's catalog: the Hive metastore or Glue."""
    catalog = GlueColumns.for_sink(sink) if sink.catalog == "glue" else HiveColumns(spark, sink)
    try:
        return align_catalog(catalog, specs)
    finally:
        catalog.close()


def apply_widenings(
    spark: SparkSession,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    plans: Mapping[str, TablePlan],
    compact_fully: CompactFully,
    crash: CrashPoints,
) -> None:
    """Rewrite every table with a widened column, then align the catalog (every start)."""
    for spec in specs.values():
        for table_type in spec.table_types:
            plan = plans.get(spec.table_name(table_type))
            if plan is not None and plan.widened:
                rewrite_table(spark, spec, table_type, sink, plan, compact_fully, crash)
    if sink.hive_sync:
        align_sink_catalog(spark, specs, sink)
