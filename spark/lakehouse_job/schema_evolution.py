"""The declared tables held against the stored ones, at start, before anything is written.

Reads each table's `hoodie.properties` and the Avro schema of its newest commit through
Hadoop's file system (the job's own S3 settings), and plans every table with
lakehouse_tables.schema_change: the column order each write uses, the allowed changes
(logged), and the refused ones (SchemaChangeRefused, so the job stops with nothing
written).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pyspark.sql import SparkSession

from lakehouse_job.hadoop_files import read_text
from lakehouse_job.hudi_options import SinkSettings, table_path
from lakehouse_job.hudi_timeline import timeline_files
from lakehouse_tables.declarations import TableSpec, TableType
from lakehouse_tables.schema_change import (
    Change,
    SchemaChangeRefused,
    StoredTable,
    TablePlan,
    commit_schema,
    completed_instants,
    parse_properties,
    plan_table,
    refusal_report,
    stored_table,
    table_type_changes,
)

log = logging.getLogger(__name__)

ALL_TABLE_TYPES: tuple[TableType, ...] = ("COPY_ON_WRITE", "MERGE_ON_READ")


def properties_path(path: str) -> str:
    """The hoodie.properties file of the table at `path`."""
    return f"{path.rstrip('/')}/.hoodie/hoodie.properties"


def read_properties(spark: SparkSession, path: str) -> dict[str, str]:
    """The hoodie.properties of the table at `path` (which must have one)."""
    return parse_properties(read_text(spark, properties_path(path)))


def read_stored(spark: SparkSession, path: str, name: str) -> StoredTable | None:
    """The table at `path` as stored, or None when it has no completed commit."""
    names = timeline_files(spark, path)
    if not names or "hoodie.properties" not in names:
        return None
    for instant in completed_instants(names):
        schema = commit_schema(read_text(spark, f"{path}/.hoodie/{instant}"))
        if schema is not None:
            return stored_table(name, read_properties(spark, path), schema)
    return None


def plan_tables(
    spark: SparkSession, specs: Mapping[str, TableSpec], sink: SinkSettings, source: str
) -> dict[str, TablePlan]:
    """Table name -> plan for every declared Hudi table; raises SchemaChangeRefused."""
    plans: dict[str, TablePlan] = {}
    refused: list[Change] = []
    for spec in specs.values():
        stored = {
            table_type: read_stored(
                spark, table_path(sink, spec, table_type), spec.table_name(table_type)
            )
            for table_type in ALL_TABLE_TYPES
        }
        existing = [t for t, table in stored.items() if table is not None]
        changes = table_type_changes(spec, existing, source)
        for table_type in spec.table_types:
            plan = plan_table(spec, table_type, stored[table_type], source)
            plans[plan.table] = plan
            changes += plan.changes
        for change in changes:
            if not change.allowed:
                refused.append(change)
            elif change.kind != "new table":
                log.info("schema change: %s", change.message)
    if refused:
        raise SchemaChangeRefused(refusal_report(refused))
    return plans
