"""What users query in Trino beside the Hudi tables, as SQL: pure, from the declarations.

For each declared event type, in Trino's `hive` catalog (Trino keeps views in the
metastore; the `hudi` connector has no views):

- `<event_type>`: the live rows, a view over the Copy-on-Write table (the Merge-on-Read
  read-optimized one when the type has no CoW table) that hides tombstones
  (`WHERE NOT _is_deleted`), with the declared columns, the partition column and the
  time each row arrived and was committed. `SELECT * FROM hive.lakehouse.orders`.
- `<event_type>_json`: the raw JSON copy as an external table over its S3 prefix
  (every valid record as it arrived: duplicates and superseded versions included), so
  JSON and Hudi answer the same SQL. Timestamps stay text there
  (`from_iso8601_timestamp(order_ts)`): the JSON reader does not parse Spark's ISO form.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakehouse_tables import columns
from lakehouse_tables import types as T
from lakehouse_tables.declarations import TableSpec, TableType

VIEW_CATALOG = "hive"
HUDI_CATALOG = "hudi"
_TRINO_TYPES: dict[T.Primitive, str] = {
    T.Primitive.STRING: "varchar",
    T.Primitive.LONG: "bigint",
    T.Primitive.DOUBLE: "double",
    T.Primitive.BOOLEAN: "boolean",
    T.Primitive.TIMESTAMP: "timestamp(6)",
    T.Primitive.DATE: "date",
}


def trino_type(t: T.FieldType, timestamp: str = "timestamp(6)") -> str:
    """Trino's name for a declared type; `timestamp` replaces timestamp at every level
    (the raw JSON table reads timestamps as varchar)."""
    if t == T.Primitive.TIMESTAMP:
        return timestamp
    if isinstance(t, T.Primitive):
        return _TRINO_TYPES[t]
    if isinstance(t, T.Decimal):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, T.Struct):
        fields = ", ".join(f"{name} {trino_type(ft, timestamp)}" for name, ft in t.fields)
        return f"row({fields})"
    if isinstance(t, T.Array):
        return f"array({trino_type(t.element, timestamp)})"
    return f"map(varchar, {trino_type(t.value, timestamp)})"


@dataclass(frozen=True)
class QueryObject:
    """One view or external table: its name, the Hudi table it needs first, and its DDL."""

    name: str
    requires: str  # the table that must exist before the DDL can run (Trino checks it)
    ddl: str
    # An external table's columns as declared now, (name, Trino type): a table made by an
    # earlier declaration is re-made when they differ (its data stays where it is).
    columns: tuple[tuple[str, str], ...] = ()

    def columns_query(self, database: str) -> str:
        return (
            f"SELECT column_name, data_type FROM {VIEW_CATALOG}.information_schema.columns "
            f"WHERE table_schema = '{database}' AND table_name = '{self.name}' "
            "ORDER BY ordinal_position"
        )

    def drop_ddl(self, database: str) -> str:
        return f"DROP TABLE IF EXISTS {VIEW_CATALOG}.{database}.{self.name}"


def live_view_name(spec: TableSpec) -> str:
    return spec.event_type


def json_table_name(spec: TableSpec) -> str:
    return f"{spec.event_type}_json"


def source_table(spec: TableSpec) -> str:
    table_type: TableType = (
        "COPY_ON_WRITE" if "COPY_ON_WRITE" in spec.table_types else "MERGE_ON_READ"
    )
    name = spec.table_name(table_type)
    return name if table_type == "COPY_ON_WRITE" else f"{name}_ro"


def live_view(spec: TableSpec, database: str) -> QueryObject:
    source = source_table(spec)
    selected = [
        *spec.schema,
        spec.partition_name,
        columns.ARRIVAL_TS,
        f"_hoodie_commit_time AS {COMMIT_TIME}",
    ]
    ddl = (
        f"CREATE OR REPLACE VIEW {VIEW_CATALOG}.{database}.{live_view_name(spec)} "
        f"COMMENT 'live {spec.event_type} rows (tombstones hidden) of {HUDI_CATALOG}."
        f"{database}.{source}' AS\n"
        f"SELECT {', '.join(selected)}\n"
        f"FROM {HUDI_CATALOG}.{database}.{source}\n"
        f"WHERE NOT {columns.IS_DELETED}"
    )
    return QueryObject(live_view_name(spec), source, ddl)


COMMIT_TIME = "_commit_time"


def json_columns(spec: TableSpec) -> list[tuple[str, str]]:
    """The raw copy's columns as Trino reads them (parse.raw_rows writes these)."""
    declared = [(name, trino_type(kind, timestamp="varchar")) for name, kind in spec.schema.items()]
    return [
        *declared,
        (spec.partition_name, "varchar"),
        (columns.OP, "varchar"),
        (columns.IS_DELETED, "boolean"),
        (columns.INGEST_SHARD, "varchar"),
        (columns.INGEST_SEQ, "varchar"),
        (columns.INGEST_SUBSEQ, "bigint"),
        (columns.ARRIVAL_TS, "varchar"),
        (columns.RAW_PAYLOAD, "varchar"),
    ]


def json_table(spec: TableSpec, database: str, location: str) -> QueryObject:
    """`location`: the raw copy's prefix of this type (sinks.raw_json_path), s3:// or s3a://;
    its batch folders are read recursively (hive.recursive-directories in hive.properties)."""
    cols = ",\n  ".join(f"{name} {kind}" for name, kind in json_columns(spec))
    ddl = (
        f"CREATE TABLE IF NOT EXISTS {VIEW_CATALOG}.{database}.{json_table_name(spec)} (\n"
        f"  {cols}\n)\n"
        f"COMMENT 'raw JSON copy of {spec.event_type} events, every version as it arrived'\n"
        f"WITH (format = 'JSON', external_location = '{location.rstrip('/')}/')"
    )
    return QueryObject(json_table_name(spec), source_table(spec), ddl, tuple(json_columns(spec)))
