"""`lakehouse cdc declare`: tables-file entries for captured tables, read from PostgreSQL's
catalog (columns, types, primary key, replica identity).

Each column's type is what the CDC service's Debezium settings make of it (see
services/cdc/tables.yaml's header): integers -> long, numeric(p,s) -> decimal(p,s) (exact
digits), timestamps -> timestamp, date -> date, time and text-like types -> string. The
entry's key is the table's primary key, all its columns in order; the two fields the job
fills from the change event (its log position and commit time) are added.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from lakehouse.cdc import CdcError

# The fields lakehouse_job.debezium fills: they must not be columns of the table.
LSN_FIELD: Final = "source_lsn"
COMMITTED_FIELD: Final = "committed_at"

_LONG: Final = frozenset({"bigint", "integer", "smallint"})
_STRING: Final = frozenset(
    {"text", "character varying", "character", "uuid", "json", "jsonb", "citext", "name"}
)
# decimal(p,s) as the tables file reads it: Spark's DecimalType, precision up to 38.
_MAX_PRECISION: Final = 38


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str  # information_schema.columns.data_type
    precision: int | None = None
    scale: int | None = None
    udt_name: str = ""


@dataclass(frozen=True)
class CapturedTable:
    schema: str
    table: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    replica_identity: str  # d(efault), f(ull), i(ndex), n(othing)


def declared_type(column: Column) -> tuple[str | None, str]:
    """The tables-file type of a column (None: left out) and a note for the entry."""
    t = column.data_type
    if t in _LONG:
        return "long", ""
    if t == "numeric":
        if column.precision is None or column.precision > _MAX_PRECISION:
            return "string", "numeric without a precision (or past 38 digits): its exact digits"
        return f"decimal({column.precision},{column.scale or 0})", ""
    if t in ("real", "double precision"):
        return "double", ""
    if t == "boolean":
        return "boolean", ""
    if t.startswith("timestamp"):
        return "timestamp", "" if "with time zone" in t else "its wall clock read as UTC"
    if t == "date":
        return "date", ""
    if t.startswith("time"):
        return "string", "HH:mm:ss[.ffffff]"
    if t == "interval":
        return "long", "microseconds"
    if t in _STRING or (t == "USER-DEFINED" and column.udt_name):
        return "string", "" if t != "USER-DEFINED" else f"{column.udt_name} as its label"
    if t == "bytea":
        return "string", "base64"
    return None, f"{t} is not declared (Debezium's JSON for it is no field type of the job)"


def entry_name(table: CapturedTable) -> str:
    return f"cdc_{table.table}" if table.schema == "public" else f"cdc_{table.schema}_{table.table}"


def entry(table: CapturedTable) -> str:
    """One tables-file entry (YAML text, indented to sit under event_types:)."""
    where = f"{table.schema}.{table.table}"
    if not table.primary_key:
        raise CdcError(
            f"{where} has no primary key: the lake keys each row by it (a row without one "
            "cannot be updated or deleted). Add a primary key, or leave the table out"
        )
    names = {c.name for c in table.columns}
    for filled in (LSN_FIELD, COMMITTED_FIELD):
        if filled in names:
            raise CdcError(
                f"{where} has a column {filled}, the name of a field the job fills from the "
                "change event: rename the field in the entry (precombine, partition_by.from)"
            )
    lines = [f"  {entry_name(table)}:"]
    if table.replica_identity != "f":
        lines.append(
            f"    # REPLICA IDENTITY is not FULL: a delete carries the key only, and an "
            f"unchanged large (TOAST) value of an update a placeholder the job quarantines. "
            f"ALTER TABLE {where} REPLICA IDENTITY FULL;"
        )
    lines += [
        f'    stream: "*.{where}"',
        "    format: debezium",
        f"    table: {entry_name(table)}",
        "    schema:",
    ]
    types: dict[str, str] = {}
    for column in table.columns:
        declared, note = declared_type(column)
        if declared is None:
            lines.append(f"      # {column.name}: {note}")
            continue
        types[column.name] = declared
        lines.append(f"      {column.name}: {declared}" + (f"  # {note}" if note else ""))
    for name in table.primary_key:
        if types.get(name) not in ("long", "string"):
            raise CdcError(
                f"{where}: primary key column {name} is {types.get(name) or 'not declared'}; "
                "a record key must be a long or a string"
            )
    lines += [f"      {LSN_FIELD}: long", f"      {COMMITTED_FIELD}: timestamp"]
    key = (
        table.primary_key[0] if len(table.primary_key) == 1 else f"[{', '.join(table.primary_key)}]"
    )
    lines += [
        f"    record_key: {key}",
        f"    precombine: {LSN_FIELD}",
        f"    partition_by: {{name: commit_date, from: {COMMITTED_FIELD}}}",
        "    op_field: op",
    ]
    return "\n".join(lines) + "\n"


def read_catalog(conn: Any, qualified: str) -> CapturedTable:
    """A table's columns (in order), primary key (in key order) and replica identity."""
    if qualified.count(".") != 1:
        raise CdcError(f"{qualified!r}: name a table as schema.table (public.orders)")
    schema, table = qualified.split(".")
    found = conn.execute(
        "SELECT c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')",
        (schema, table),
    ).fetchone()
    if found is None:
        raise CdcError(f"{qualified}: no such table in the database")
    identity = found[0]
    if isinstance(identity, bytes):
        identity = identity.decode()
    columns = tuple(
        Column(name, data_type, precision, scale, udt)
        for name, data_type, precision, scale, udt in conn.execute(
            "SELECT column_name, data_type, numeric_precision, numeric_scale, udt_name "
            "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "ORDER BY ordinal_position",
            (schema, table),
        )
    )
    key = tuple(
        row[0]
        for row in conn.execute(
            "SELECT a.attname FROM pg_index i "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
            "WHERE i.indrelid = %s::regclass AND i.indisprimary "
            "ORDER BY array_position(i.indkey::int2[], a.attnum)",
            (f'"{schema}"."{table}"',),
        )
    )
    return CapturedTable(schema, table, columns, key, str(identity))


def declare(conn: Any, tables: Sequence[str]) -> str:
    """The entries of `tables` (schema.table each), under an event_types: header."""
    return "event_types:\n" + "\n".join(entry(read_catalog(conn, t.strip())) for t in tables)
