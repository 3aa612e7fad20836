"""What a changed declaration does to a table that already exists: pure, no Spark.

A Hudi table keeps its schema in each commit's metadata (the Avro schema of the rows it
wrote) and its keys in `.hoodie/hoodie.properties`. At start, before anything is
written, the job (and `lakehouse schema diff`) holds every declared table against that
stored state and gets a plan per table:

- the columns to write, in the table's physical order: the stored columns where they
  were, then the newly declared ones. The metastore accepts new columns only at the end
  of a table (Hive refuses a column list whose types shift position), so a column
  declared in the middle of an entry is still appended; readers see declaration order
  through the live view.
- the changes, each allowed (a new nullable column; a widened type, see `widens`) or
  refused (a dropped or renamed column, any other type change, another record key,
  precombine field or table type). One refused change stops the job before it writes
  anything.
- the widened columns, for which the job rewrites the table once in the new types before
  it writes anything else (lakehouse_job.table_widening): Hudi's reader and Trino read a
  Parquet file only in the type it was written in, so every file must be in the new one.

Types are compared as Spark's simple type strings (string, bigint, double, boolean,
timestamp, date, decimal(p,s), struct<...>, array<...>, map<...>), which is also what
the Avro schemas in the commits map to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec, TableType
from lakehouse_tables.types import spark_simple

ChangeKind = Literal[
    "new table", "add", "widen", "drop", "retype", "record key", "precombine", "table type"
]

# Widenings of the top-level primitive types (Spark simple type strings) every reader
# takes once the table is rewritten: integers to double (exact up to 2**53), and to a
# decimal with room for every value of the integer type.
_WIDENINGS: Final[Mapping[str, frozenset[str]]] = {
    "int": frozenset({"bigint", "double"}),
    "float": frozenset({"double"}),
    "bigint": frozenset({"double"}),
}
_INTEGER_DIGITS: Final[Mapping[str, int]] = {"int": 10, "bigint": 19}
_DECIMAL: Final = re.compile(r"decimal\((\d+),(\d+)\)")

HUDI_META_PREFIX: Final = "_hoodie_"


class SchemaChangeRefused(RuntimeError):
    """A declaration change that the existing tables cannot take; nothing was written."""


@dataclass(frozen=True)
class StoredTable:
    """A Hudi table as it is on storage: its columns in physical order (Hudi's own
    _hoodie_* columns left out) and the keys it was created with."""

    name: str
    columns: tuple[tuple[str, str], ...]
    record_key: str
    precombine: str
    table_type: str


@dataclass(frozen=True)
class Change:
    table: str
    kind: ChangeKind
    column: str | None
    old: str | None
    new: str | None
    allowed: bool
    message: str


@dataclass(frozen=True)
class TablePlan:
    table: str
    column_order: tuple[str, ...]  # the columns to write, in this order
    changes: tuple[Change, ...]

    @property
    def refused(self) -> list[Change]:
        return [c for c in self.changes if not c.allowed]

    @property
    def widened(self) -> dict[str, str]:
        """Column -> its new type, for every widened column (the table is rewritten)."""
        return {c.column: c.new for c in self.changes if c.kind == "widen" and c.column and c.new}


def row_columns(spec: TableSpec) -> list[tuple[str, str]]:
    """The columns the job writes for `spec`, as (name, Spark simple type), in declaration
    order: the declared fields, the partition column, then the job's own columns
    (lakehouse_job.spark_schema.valid_row_type is the same list as Spark types)."""
    return [
        *((name, spark_simple(kind)) for name, kind in spec.schema.items()),
        (spec.partition_name, "string"),
        (columns.OP, "string"),
        (columns.IS_DELETED, "boolean"),
        (columns.INGEST_SHARD, "string"),
        (columns.INGEST_SEQ, "string"),
        (columns.INGEST_SUBSEQ, "bigint"),
        (columns.ARRIVAL_TS, "timestamp"),
    ]


def widens(old: str, new: str) -> bool:
    """Whether a stored column of type `old` may be declared as `new` with every stored
    value kept exactly (integers to double: up to 2**53): an integer to double or to a
    decimal with enough integer digits, a decimal to one with at least as many integer
    digits and as many fraction digits. Nested types keep theirs."""
    old, new = normalize_type(old), normalize_type(new)
    if new in _WIDENINGS.get(old, ()):
        return True
    target = _DECIMAL.fullmatch(new)
    if target is None or old == new:
        return False
    precision, scale = int(target[1]), int(target[2])
    if old in _INTEGER_DIGITS:
        return precision - scale >= _INTEGER_DIGITS[old]
    source = _DECIMAL.fullmatch(old)
    if source is None:
        return False
    old_precision, old_scale = int(source[1]), int(source[2])
    return scale >= old_scale and precision - scale >= old_precision - old_scale


def normalize_type(kind: str) -> str:
    """A type string as Spark prints it: lower case, no spaces or backticks (the
    metastore keeps what its writer sent, e.g. Hudi's hive sync writes BIGINT)."""
    return re.sub(r"[\s`]", "", kind).lower()


def metastore_widenings(
    metastore_columns: Iterable[tuple[str, str]], declared: Mapping[str, str]
) -> dict[str, str]:
    """Column -> declared type, for each metastore column still in a type that the declared
    one widens: what to change in the metastore once the table is rewritten, since Hudi
    0.15's hive sync widens only int to bigint and float to double by itself."""
    return {
        name: declared[name]
        for name, kind in metastore_columns
        if name in declared and widens(kind, declared[name])
    }


def plan_table(
    spec: TableSpec,
    table_type: TableType,
    stored: StoredTable | None,
    source: str = "the tables file",
) -> TablePlan:
    """The plan for one declared table; `stored` is None for a table not on storage yet."""
    name = spec.table_name(table_type)
    wanted = row_columns(spec)
    if stored is None:
        change = Change(name, "new table", None, None, None, True, f"{name}: created")
        return TablePlan(name, tuple(n for n, _ in wanted), (change,))
    where = f"{source}, entry {spec.event_type!r}, table {name}"
    wanted_types = dict(wanted)
    stored_names = [n for n, _ in stored.columns]
    added = [(n, t) for n, t in wanted if n not in set(stored_names)]
    changes = [
        *_key_changes(spec, stored, name, where),
        *_stored_column_changes(spec, stored, wanted_types, name, where),
        *_added_column_changes(added, name, where),
    ]
    kept = [n for n in stored_names if n in wanted_types]
    return TablePlan(name, (*kept, *(n for n, _ in added)), tuple(changes))


def _refusal(
    name: str, where: str, kind: ChangeKind, column: str | None, old: str, new: str, what: str
) -> Change:
    return Change(name, kind, column, old, new, False, f"{where}: {what}")


def _key_changes(spec: TableSpec, stored: StoredTable, name: str, where: str) -> list[Change]:
    """Refusals of a changed record key or precombine field: a table keeps its own."""
    changes: list[Change] = []
    if stored.record_key != spec.record_key:
        changes.append(
            _refusal(
                name,
                where,
                "record key",
                None,
                stored.record_key,
                spec.record_key,
                f"record_key changed from {stored.record_key!r} to {spec.record_key!r}. A "
                "table keeps the key it was created with: declare the old key again, or give "
                "the entry a new `table:` name (a new table, filled from the stream from now "
                "on).",
            )
        )
    if stored.precombine != spec.precombine:
        changes.append(
            _refusal(
                name,
                where,
                "precombine",
                None,
                stored.precombine,
                spec.precombine,
                f"precombine changed from {stored.precombine!r} to {spec.precombine!r}. The "
                "table orders versions of a key by the field it was created with: declare it "
                "again, or give the entry a new `table:` name.",
            )
        )
    return changes


def _stored_column_changes(
    spec: TableSpec,
    stored: StoredTable,
    wanted_types: dict[str, str],
    name: str,
    where: str,
) -> list[Change]:
    """Per stored column, in the table's order: dropped (refused), widened (applied at
    start), or retyped otherwise (refused)."""
    changes: list[Change] = []
    for column, old in stored.columns:
        new = wanted_types.get(column)
        if new is None:
            changes.append(_drop_refusal(name, where, column, old))
        elif new != old and widens(old, new):
            changes.append(
                Change(
                    name,
                    "widen",
                    column,
                    old,
                    new,
                    True,
                    f"{where}: column {column!r} widened from {old} to {new}; the "
                    "table is rewritten once in the new types at start (every row, one "
                    "commit) and the metastore follows",
                )
            )
        elif new != old:
            changes.append(_retype_refusal(spec, name, where, column, old, new))
    return changes


def _drop_refusal(name: str, where: str, column: str, old: str) -> Change:
    return _refusal(
        name,
        where,
        "drop",
        column,
        old,
        "",
        f"column {column!r} ({old}) is in the table but no longer declared (a "
        "removed or renamed field, or another partition_by name). "
        "Dropping or renaming a column of a live table is not supported: declare it "
        "again (rows without it read NULL), and add a renamed column as a new one; "
        "or give the entry a new `table:` name.",
    )


def _retype_refusal(
    spec: TableSpec, name: str, where: str, column: str, old: str, new: str
) -> Change:
    return _refusal(
        name,
        where,
        "retype",
        column,
        old,
        new,
        f"column {column!r} changed type from {old} to {new}, which could "
        "change or lose stored values (a type may only widen: long to double, "
        "long to a decimal with 19 or more integer digits, a decimal to more "
        "integer and fraction digits; nested types keep theirs): declare the "
        "old type again, and add the new type as a new column (e.g. "
        f"'{column}_v2') filled from the raw copy with "
        f"`lakehouse backfill --table {spec.event_type}`.",
    )


def _added_column_changes(added: list[tuple[str, str]], name: str, where: str) -> list[Change]:
    """The declared columns the table lacks: added, rows written before read NULL."""
    return [
        Change(
            name,
            "add",
            column,
            None,
            kind,
            True,
            f"{where}: new column {column!r} ({kind}); rows written before read NULL",
        )
        for column, kind in added
    ]


def table_type_changes(
    spec: TableSpec, existing: Iterable[TableType], source: str = "the tables file"
) -> list[Change]:
    """An entry's table types held against the types whose tables exist with a commit.

    A table no longer declared is refused: it would silently stop receiving rows. A
    declared table missing beside existing ones is allowed: a crash between the first
    writes of a new entry's tables leaves exactly that (the replayed batch writes the
    missing one), and a table type added by the user starts with the rows from the
    stream position on, which `lakehouse backfill` completes from the raw copy.
    """
    existing = set(existing)
    declared = set(spec.table_types)
    if not existing:
        return []
    where = f"{source}, entry {spec.event_type!r}"
    changes = []
    for gone in sorted(existing - declared):
        name = spec.table_name(gone)
        changes.append(
            Change(
                name,
                "table type",
                None,
                gone,
                None,
                False,
                f"{where}: table_types no longer lists {gone}, but {name} exists: it would "
                "stop receiving rows unnoticed. Declare it again, or give the entry a new "
                "`table:` name.",
            )
        )
    for new in sorted(declared - existing):
        name = spec.table_name(new)
        changes.append(
            Change(
                name,
                "table type",
                None,
                None,
                new,
                True,
                f"{where}: {name} does not exist beside the entry's other tables: it is "
                "created by the next batch with the rows from the stream position on "
                f"(`lakehouse backfill --table {spec.event_type}` adds the earlier ones)",
            )
        )
    return changes


def refusal_report(changes: Sequence[Change]) -> str:
    """One error text for every refused change."""
    lines = [c.message for c in changes if not c.allowed]
    return (
        "the declared tables cannot be applied to the existing ones; nothing was written "
        "(the tables, the metastore and the checkpoint are as they were):\n  - "
        + "\n  - ".join(lines)
    )


# --- the stored state -----------------------------------------------------------------


def parse_properties(text: str) -> dict[str, str]:
    """hoodie.properties (Java properties: key=value lines, # comments)."""
    props = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            key, value = line.split("=", 1)
            # Java escapes ':', '=', '#', '!', spaces and backslashes when it writes them.
            props[key.strip()] = re.sub(r"\\([:=#!\\ ])", r"\1", value.strip())
    return props


_COMPLETED: Final = re.compile(r"^(\d+)\.(commit|deltacommit|replacecommit)$")


def completed_instants(timeline_names: Iterable[str]) -> list[str]:
    """Completed write instants among `.hoodie` file names, newest first."""
    found = [(m[1], name) for name in timeline_names if (m := _COMPLETED.match(name))]
    return [name for _, name in sorted(found, reverse=True)]


def commit_schema(commit_text: str) -> dict | None:
    """The Avro schema a commit's metadata carries, if any (a compaction's may not)."""
    try:
        metadata = json.loads(commit_text)
    except ValueError:
        return None
    schema = (metadata.get("extraMetadata") or {}).get("schema")
    return json.loads(schema) if schema else None


def stored_table(name: str, properties: Mapping[str, str], avro_schema: Mapping) -> StoredTable:
    fields = avro_schema.get("fields", [])
    return StoredTable(
        name=name,
        columns=tuple(
            (f["name"], avro_to_spark(f["type"]))
            for f in fields
            if not f["name"].startswith(HUDI_META_PREFIX)
        ),
        record_key=properties.get("hoodie.table.recordkey.fields", ""),
        precombine=properties.get("hoodie.table.precombine.field", ""),
        table_type=properties.get("hoodie.table.type", ""),
    )


def avro_to_spark(avro: object) -> str:
    """An Avro field type (as Hudi writes Spark rows) -> Spark's simple type string."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise ValueError(f"unsupported Avro union {avro!r}")
        return avro_to_spark(branches[0])
    if isinstance(avro, str):
        return _AVRO_PRIMITIVES.get(avro, avro)
    if not isinstance(avro, dict):
        raise ValueError(f"unsupported Avro type {avro!r}")
    logical = avro.get("logicalType")
    kind = avro.get("type")
    if logical in ("timestamp-micros", "timestamp-millis"):
        return "timestamp"
    if logical == "date":
        return "date"
    if logical == "decimal":
        return f"decimal({avro['precision']},{avro.get('scale', 0)})"
    if kind == "record":
        inner = ",".join(f"{f['name']}:{avro_to_spark(f['type'])}" for f in avro["fields"])
        return f"struct<{inner}>"
    if kind == "array":
        return f"array<{avro_to_spark(avro['items'])}>"
    if kind == "map":
        return f"map<string,{avro_to_spark(avro['values'])}>"
    return avro_to_spark(kind)


_AVRO_PRIMITIVES: Final[Mapping[str, str]] = {
    "string": "string",
    "long": "bigint",
    "int": "int",
    "double": "double",
    "float": "float",
    "boolean": "boolean",
    "bytes": "binary",
}
