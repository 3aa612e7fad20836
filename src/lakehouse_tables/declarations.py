"""Load and validate the table declarations (tables.yaml) into frozen TableSpecs.

Pure Python (no pyspark import): the streaming job, the load generator and the CLI
read the same declarations through the same validation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal, cast

import yaml

from lakehouse_tables.rules import MAX_MICROS, MIN_MICROS
from lakehouse_tables.timestamps import parse_iso_micros
from lakehouse_tables.types import (
    IDENTIFIER,
    Array,
    Decimal,
    FieldType,
    Map,
    Struct,
    TypeSyntaxError,
    parse_type,
)

__all__ = ["FieldType"]  # the parsed type of a schema field (lakehouse_tables.types)

TableType = Literal["COPY_ON_WRITE", "MERGE_ON_READ"]
# How an entry's records are written: one flat JSON object each, or Debezium's JSON
# change events (unwrapped by lakehouse_job.debezium).
RecordFormat = Literal["json", "debezium"]
RECORD_FORMATS: Final[frozenset[str]] = frozenset({"json", "debezium"})

TABLE_TYPES: Final[frozenset[str]] = frozenset({"COPY_ON_WRITE", "MERGE_ON_READ"})

# The declarations shipped with this package; $LAKEHOUSE_TABLES names another file.
TABLES_YAML: Final[Path] = Path(__file__).resolve().parent / "tables.yaml"
TABLES_ENV: Final = "LAKEHOUSE_TABLES"

# types.IDENTIFIER: a leading underscore is kept for the job's own columns (_op,
# _is_deleted, ...) and Hudi's (_hoodie_*).
_IDENTIFIER: Final[re.Pattern[str]] = IDENTIFIER

# The job reads event_type as text, and a non-string JSON value comes out as its JSON
# text (1, true, {...}, [...], "Infinity" with quotes for 1e400); a declared name of
# that shape would let such a value pass where the record rules require a JSON string.
_JSON_LITERAL_LIKE: Final[re.Pattern[str]] = re.compile(r'^[-0-9"{\[]|^(true|false|null)$')

# Record keys become Hudi key strings; doubles/timestamps/booleans make poor, lossy keys.
_KEY_TYPES: Final[frozenset[str]] = frozenset({"string", "long"})

_TOP_KEYS: Final[frozenset[str]] = frozenset({"defaults", "event_types"})
_DEFAULT_KEYS: Final[frozenset[str]] = frozenset(
    {"table_types", "max_record_bytes", "event_time_window"}
)
_REQUIRED_ENTRY_KEYS: Final[frozenset[str]] = frozenset(
    {"table", "schema", "record_key", "precombine", "partition_by"}
)
_ENTRY_KEYS: Final[frozenset[str]] = (
    _REQUIRED_ENTRY_KEYS | {"op_field", "stream", "format"} | _DEFAULT_KEYS
)
# A Kinesis stream name ([a-zA-Z0-9_.-]), or a pattern of them with * and ?.
_STREAM_PATTERN: Final[re.Pattern[str]] = re.compile(r"^[a-zA-Z0-9_.*?-]{1,128}$")
_BUILTIN_DEFAULTS: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "table_types": ["COPY_ON_WRITE", "MERGE_ON_READ"],
        "max_record_bytes": 65536,
        # Every instant rule 9 accepts; tables.yaml narrows it.
        "event_time_window": {
            "min": "0001-01-01T00:00:00Z",
            "max": "9999-12-31T23:59:59.999999Z",
        },
    }
)


class TablesConfigError(ValueError):
    """tables.yaml is unusable; the message names the file, the entry and the problem."""


@dataclass(frozen=True)
class TableSpec:
    """One event shape and the Hudi tables it is written to."""

    event_type: str
    table: str
    # Read-only and in declaration order (column order of the written tables). Left out of
    # the hash because a mapping proxy is unhashable; equality still compares it. Values
    # are parsed types; a primitive equals its name (schema["amount"] == "double").
    schema: Mapping[str, FieldType] = field(hash=False)
    # The key's fields separated by commas (Hudi's recordkey.field); record_keys splits it.
    record_key: str
    precombine: str
    partition_name: str
    partition_source: str
    op_field: str | None
    table_types: tuple[TableType, ...]
    max_record_bytes: int
    # The event times (precombine and partition_by.from) accepted, in epoch microseconds,
    # both ends included: one buggy producer must not create thousands of date partitions.
    event_time_window: tuple[int, int] = (MIN_MICROS, MAX_MICROS)
    # The stream (name or pattern) whose every record is this entry's, whatever its
    # event_type field; None: the entry is chosen by the record's event_type.
    stream: str | None = None
    format: RecordFormat = "json"

    @property
    def record_keys(self) -> tuple[str, ...]:
        """The key's fields, in order: several for a primary key of several columns."""
        return tuple(self.record_key.split(","))

    @property
    def event_time_fields(self) -> tuple[str, ...]:
        """The fields the event-time window applies to, in schema order."""
        wanted = {self.precombine, self.partition_source}
        return tuple(name for name in self.schema if name in wanted)

    def table_name(self, table_type: TableType) -> str:
        """Hudi table name for one table type, e.g. hudi_orders_cow."""
        return f"{self.table}_{'cow' if table_type == 'COPY_ON_WRITE' else 'mor'}"


class Tables(Mapping[str, TableSpec]):
    """event_type -> TableSpec, in declaration order."""

    def __init__(self, specs: Mapping[str, TableSpec]) -> None:
        self._specs = MappingProxyType(dict(specs))

    def __getitem__(self, event_type: str) -> TableSpec:
        return self._specs[event_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Tables({list(self._specs)})"

    @property
    def event_types(self) -> list[str]:
        return list(self._specs)

    @property
    def max_record_bytes(self) -> int:
        """The largest limit of any entry: bigger records are rejected whatever their type
        (record rule 2); an entry's own, smaller limit applies after its type is known."""
        return max(spec.max_record_bytes for spec in self._specs.values())


def compared_columns(spec: TableSpec) -> list[str]:
    """Declared schema columns, then the derived partition column: what verify compares."""
    return [*spec.schema, spec.partition_name]


def default_tables_path() -> Path:
    """$LAKEHOUSE_TABLES, else the declarations shipped with this package."""
    env = os.environ.get(TABLES_ENV)
    return Path(env) if env else TABLES_YAML


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (PyYAML silently keeps the last)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise TablesConfigError(
                f"{loader.name}: line {key_node.start_mark.line + 1}: duplicate key {key!r}"
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def load_tables(path: str | Path | None = None) -> Tables:
    """Read and validate tables.yaml (default: default_tables_path()); raises
    TablesConfigError naming the file, the entry and the problem."""
    path = Path(path) if path else default_tables_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TablesConfigError(f"{path}: cannot read: {exc}") from exc
    return parse_tables(text, source=str(path))


def parse_tables(text: str, source: str = "<tables.yaml>") -> Tables:
    """Validate tables.yaml content; `source` names the file in error messages."""
    loader = _UniqueKeyLoader(text)
    loader.name = source
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise TablesConfigError(f"{source}: not valid YAML: {exc}") from exc
    finally:
        loader.dispose()
    return _build_specs(document, source)


def _build_specs(document: object, source: str) -> Tables:
    if not isinstance(document, dict):
        raise TablesConfigError(f"{source}: expected a mapping with 'event_types'")
    _reject_unknown_keys(document, _TOP_KEYS, f"{source}")
    defaults = _defaults(document.get("defaults", {}), source)
    entries = document.get("event_types")
    if not isinstance(entries, dict) or not entries:
        raise TablesConfigError(f"{source}: 'event_types' must be a non-empty mapping")

    specs: dict[str, TableSpec] = {}
    owners: dict[str, str] = {}  # table name -> event type, to catch two entries sharing a table
    stream_owners: dict[str, str] = {}
    for event_type, entry in entries.items():
        if not isinstance(event_type, str) or not event_type:
            raise TablesConfigError(f"{source}: event type {event_type!r} must be a string")
        if _JSON_LITERAL_LIKE.match(event_type):
            raise TablesConfigError(
                f"{source}: event type {event_type!r} looks like a JSON number, boolean, "
                "null, object or array"
            )
        spec = _spec(event_type, entry, defaults, f"{source}: event_types.{event_type}")
        if spec.table in owners:
            raise TablesConfigError(
                f"{source}: event_types.{event_type}: table {spec.table!r} "
                f"is already used by event_types.{owners[spec.table]}"
            )
        owners[spec.table] = event_type
        if spec.stream is not None and spec.stream in stream_owners:
            raise TablesConfigError(
                f"{source}: event_types.{event_type}: stream {spec.stream!r} "
                f"is already read by event_types.{stream_owners[spec.stream]}"
            )
        if spec.stream is not None:
            stream_owners[spec.stream] = event_type
        specs[event_type] = spec
    return Tables(specs)


def _defaults(raw: object, source: str) -> Mapping[str, Any]:
    where = f"{source}: defaults"
    if not isinstance(raw, dict):
        raise TablesConfigError(f"{where}: must be a mapping")
    _reject_unknown_keys(raw, _DEFAULT_KEYS, where)
    merged = {**_BUILTIN_DEFAULTS, **raw}
    _table_types(merged["table_types"], where)
    _max_record_bytes(merged["max_record_bytes"], where)
    _event_time_window(merged["event_time_window"], where)
    return merged


def _spec(event_type: str, entry: object, defaults: Mapping[str, Any], where: str) -> TableSpec:
    if not isinstance(entry, dict):
        raise TablesConfigError(f"{where}: must be a mapping")
    _reject_unknown_keys(entry, _ENTRY_KEYS, where)
    missing = sorted(_REQUIRED_ENTRY_KEYS - entry.keys())
    if missing:
        raise TablesConfigError(f"{where}: missing required key(s): {', '.join(missing)}")

    table = _identifier(entry["table"], f"{where}: table")
    schema = _schema(entry["schema"], where)
    record_key = ",".join(_record_key(entry["record_key"], schema, where))
    record_format, stream = _format_and_stream(entry, where)
    precombine = _field_ref(entry["precombine"], schema, "precombine", where)
    if record_format == "debezium":
        # The change's log position (source.lsn) orders it; lakehouse_job.debezium fills it.
        if schema[precombine] != "long":
            raise TablesConfigError(
                f"{where}: precombine {precombine!r} has type {schema[precombine]}, expected "
                "long with format debezium (it holds the change's LSN)"
            )
        if entry.get("op_field") is None:
            raise TablesConfigError(f"{where}: format debezium needs op_field (e.g. op)")
    else:
        _require_timestamp(schema, precombine, "precombine", where)
    partition_name, partition_source = _partition(entry["partition_by"], schema, where)

    op_field = entry.get("op_field")
    if op_field is not None:
        op_field = _identifier(op_field, f"{where}: op_field")
        # The op is read from the JSON and exposed as _op; declaring it as a column as well
        # would write two copies that can disagree after normalisation.
        if op_field in schema:
            raise TablesConfigError(f"{where}: op_field {op_field!r} must not be in schema")

    return TableSpec(
        event_type=event_type,
        table=table,
        schema=MappingProxyType(schema),
        record_key=record_key,
        precombine=precombine,
        partition_name=partition_name,
        partition_source=partition_source,
        op_field=op_field,
        table_types=_table_types(entry.get("table_types", defaults["table_types"]), where),
        max_record_bytes=_max_record_bytes(
            entry.get("max_record_bytes", defaults["max_record_bytes"]), where
        ),
        event_time_window=_event_time_window(
            entry.get("event_time_window", defaults["event_time_window"]), where
        ),
        stream=stream,
        format=record_format,
    )


def _format_and_stream(entry: Mapping[str, Any], where: str) -> tuple[RecordFormat, str | None]:
    record_format = entry.get("format", "json")
    if record_format not in RECORD_FORMATS:
        raise TablesConfigError(
            f"{where}: format {record_format!r} is not one of {', '.join(sorted(RECORD_FORMATS))}"
        )
    stream = entry.get("stream")
    if stream is not None and (not isinstance(stream, str) or not _STREAM_PATTERN.match(stream)):
        raise TablesConfigError(
            f"{where}: stream {stream!r} must be a Kinesis stream name ([a-zA-Z0-9_.-]) or a "
            "pattern of them with * and ?"
        )
    if record_format == "debezium" and stream is None:
        raise TablesConfigError(
            f"{where}: format debezium needs stream (Debezium writes one stream per table)"
        )
    return cast(RecordFormat, record_format), stream


def _schema(raw: object, where: str) -> dict[str, FieldType]:
    if not isinstance(raw, dict) or not raw:
        raise TablesConfigError(f"{where}: schema must be a non-empty mapping of field: type")
    schema: dict[str, FieldType] = {}
    for name, type_name in raw.items():
        _identifier(name, f"{where}: schema field")
        try:
            schema[name] = parse_type(type_name)
        except TypeSyntaxError as exc:
            raise TablesConfigError(
                f"{where}: schema field {name!r} has type {type_name!r}: {exc}"
            ) from None
    _same_named_decimals_agree(schema, where)
    return schema


def _decimal_fields(kind: FieldType, path: str) -> Iterator[tuple[str, str, Decimal]]:
    """(field name, its path, its type) of every decimal field in `kind`, nested ones too."""
    if isinstance(kind, Decimal):
        yield path.rsplit(".", 1)[-1].removesuffix("[]"), path, kind
    elif isinstance(kind, Struct):
        for name, inner in kind.fields:
            yield from _decimal_fields(inner, f"{path}.{name}")
    elif isinstance(kind, Array):
        yield from _decimal_fields(kind.element, f"{path}[]")
    elif isinstance(kind, Map):
        yield from _decimal_fields(kind.value, f"{path}{{}}")


def _same_named_decimals_agree(schema: Mapping[str, FieldType], where: str) -> None:
    """Hudi 0.15 writes a decimal as an Avro fixed type named after its field: two decimal
    fields of one name with different precision or scale (a top-level `price` and an
    item's `price`) make a table whose first commit succeeds and every later upsert fails
    ("Can't redefine: price"). Refused here, before anything is written."""
    seen: dict[str, tuple[str, Decimal]] = {}
    for column, kind in schema.items():
        for name, path, decimal in _decimal_fields(kind, column):
            first = seen.setdefault(name, (path, decimal))
            if first[1] != decimal:
                raise TablesConfigError(
                    f"{where}: decimal fields named {name!r} differ: {first[0]} is "
                    f"{first[1]} and {path} is {decimal}. Hudi names a decimal's Avro type "
                    "after its field, so the table could be created but never updated: give "
                    "one of them another name, or both the same precision and scale"
                )


def _partition(raw: object, schema: Mapping[str, FieldType], where: str) -> tuple[str, str]:
    if not isinstance(raw, dict) or set(raw) != {"name", "from"}:
        raise TablesConfigError(f"{where}: partition_by must be {{name: <column>, from: <field>}}")
    name = _identifier(raw["name"], f"{where}: partition_by.name")
    if name in schema:
        raise TablesConfigError(
            f"{where}: partition_by.name {name!r} is derived and must not be in schema"
        )
    source = _field_ref(raw["from"], schema, "partition_by.from", where)
    _require_timestamp(schema, source, "partition_by.from", where)
    return name, source


def _record_key(value: object, schema: Mapping[str, FieldType], where: str) -> list[str]:
    """The key's fields: one name, or several (a list, or names separated by commas) for a
    table whose primary key has several columns, in the key's order."""
    names = value if isinstance(value, list) else str(value).split(",") if value else []
    fields = [
        _field_ref(n.strip() if isinstance(n, str) else n, schema, "record_key", where)
        for n in names
    ]
    if not fields:
        raise TablesConfigError(f"{where}: record_key names no field")
    if len(set(fields)) != len(fields):
        raise TablesConfigError(f"{where}: record_key {value!r} names a field twice")
    for name in fields:
        if schema[name] not in _KEY_TYPES:
            raise TablesConfigError(
                f"{where}: record_key {name!r} has type {schema[name]}, expected string or long"
            )
    return fields


def _field_ref(value: object, schema: Mapping[str, FieldType], what: str, where: str) -> str:
    if not isinstance(value, str) or value not in schema:
        raise TablesConfigError(f"{where}: {what} {value!r} is not a field in schema")
    return value


def _require_timestamp(schema: Mapping[str, FieldType], name: str, what: str, where: str) -> None:
    if schema[name] != "timestamp":
        raise TablesConfigError(
            f"{where}: {what} {name!r} has type {schema[name]}, expected timestamp"
        )


def _identifier(value: object, where: str) -> str:
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        raise TablesConfigError(
            f"{where}: {value!r} is not a lower-case identifier ([a-z][a-z0-9_]*)"
        )
    return value


def _table_types(raw: object, where: str) -> tuple[TableType, ...]:
    if (
        not isinstance(raw, list)
        or not raw
        or any(t not in TABLE_TYPES for t in raw)
        or len(set(raw)) != len(raw)
    ):
        raise TablesConfigError(
            f"{where}: table_types must be a non-empty list of distinct values from "
            f"{', '.join(sorted(TABLE_TYPES))}, got {raw!r}"
        )
    return tuple(cast(TableType, t) for t in raw)


def _max_record_bytes(raw: object, where: str) -> int:
    # bool is an int subclass; `max_record_bytes: yes` must not mean 1 byte.
    if not isinstance(raw, int) or isinstance(raw, bool) or raw <= 0:
        raise TablesConfigError(
            f"{where}: max_record_bytes must be a positive integer, got {raw!r}"
        )
    return raw


def _event_time_window(raw: object, where: str) -> tuple[int, int]:
    if not isinstance(raw, dict) or set(raw) != {"min", "max"}:
        raise TablesConfigError(
            f"{where}: event_time_window must be {{min: <timestamp>, max: <timestamp>}}"
        )
    # YAML reads an unquoted 2000-01-01T00:00:00Z as a datetime: ask for the text form.
    bounds = [parse_iso_micros(raw[end]) for end in ("min", "max")]
    if bounds[0] is None or bounds[1] is None:
        raise TablesConfigError(
            f"{where}: event_time_window bounds must be quoted timestamps in the record "
            f'rules\' form, e.g. "2000-01-01T00:00:00Z", got {raw!r}'
        )
    if bounds[0] > bounds[1]:
        raise TablesConfigError(f"{where}: event_time_window min is after max: {raw!r}")
    return bounds[0], bounds[1]


def _reject_unknown_keys(mapping: dict[Any, Any], allowed: frozenset[str], where: str) -> None:
    # A misspelt optional key (e.g. `opfield`) would otherwise be silently ignored.
    unknown = sorted(str(k) for k in mapping.keys() - allowed)
    if unknown:
        raise TablesConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})"
        )
